import type { BatchSummary, TypeOutcome } from './reference-work.js'
import type { JsonArrayBody } from '../shipments/json-array-reader.js'
import type { ReferenceType } from './texts.js'

/*
 * The messages between the service's thread and the references thread (reference-engine.ts,
 * reference-worker.ts). A job is one request's work; a call is one question that gets one answer. A job's
 * messages are handled in the order sent.
 */

export type ThreadRequest =
  | { op: 'open', job: number, maxRows: number }
  | { op: 'write', job: number, bytes: Uint8Array }
  | { op: 'end', job: number, call: number }
  | { op: 'summary', job: number, call: number }
  | { op: 'decide', job: number, call: number, type: ReferenceType, stored: string[] }
  | { op: 'close', job: number }

/** A request that gets an answer, before its call number is given. */
export type ThreadQuestion<R = ThreadRequest> = R extends { call: number } ? Omit<R, 'call'> : never

export type ThreadAnswer =
  | { call: number, ok: true, value: JsonArrayBody | BatchSummary | TypeOutcome }
  /** `invalidJson`: the body was not JSON, `tooDeep`: nested too deep (400s); else a fault of the thread's (a 500). */
  | { call: number, ok: false, invalidJson: boolean, tooDeep: boolean, message: string }
