import { Type, type TSchema } from '@sinclair/typebox'

/*
 * The envelope of the REST endpoints (docs/api/errors.md):
 * error/status/statusCode/message and maybe data. The schemas describe the routes; the builders are the
 * only place an envelope is made.
 */

export const SuccessEnvelope = <T extends TSchema>(data: T) => Type.Object({
  error: Type.Literal(false),
  status: Type.Literal(true),
  statusCode: Type.Literal(200),
  message: Type.String(),
  data
})

/** A request-level failure: no data. */
export const FailureEnvelope = Type.Object({
  error: Type.Literal(true),
  status: Type.Literal(false),
  statusCode: Type.Integer(),
  message: Type.String(),
  // Additive to the message: what went wrong as a code a client can branch on (docs/api/errors.md).
  code: Type.String({ description: 'UNAUTHENTICATED, INVALID_JSON, ORDER_STATUS_REQUIRED, INVALID_STATUS, RATE_LIMITED, …' })
})

/** A request-level failure that still reports every item (the status update's invalid status). */
export const FailureEnvelopeWithData = <T extends TSchema>(data: T) =>
  Type.Composite([FailureEnvelope, Type.Object({ data })])

/** Set on an answer replayed for an Idempotency-Key (Stripe's name for it). */
export const REPLAYED_HEADER = 'idempotent-replayed'

/** The envelope of a success; its type follows from the literal (the route's schema checks it). */
export function success<D> (message: string, data: D) {
  return { error: false as const, status: true as const, statusCode: 200 as const, message, data }
}

/** The envelope of a 201 (a resource made: POST /v2/webhooks/endpoints). */
export function created<D> (message: string, data: D) {
  return { error: false as const, status: true as const, statusCode: 201 as const, message, data }
}

export const CreatedEnvelope = <T extends TSchema>(data: T) => Type.Object({
  error: Type.Literal(false),
  status: Type.Literal(true),
  statusCode: Type.Literal(201),
  message: Type.String(),
  data
})

type Failure = { error: true, status: false, statusCode: number, message: string, code: string }

/** A request-level failure, with `data` only where the contract has it. */
export function failure (statusCode: number, message: string, code: string): Failure
export function failure<D> (statusCode: number, message: string, code: string, data: D): Failure & { data: D }
export function failure<D> (statusCode: number, message: string, code: string, data?: D): object {
  return data === undefined
    ? { error: true, status: false, statusCode, message, code }
    : { error: true, status: false, statusCode, message, code, data }
}
