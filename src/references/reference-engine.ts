import { Worker } from 'node:worker_threads'
import { RequestError } from '../errors.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import type { JsonArrayBody, JsonArraySink } from '../shipments/json-array-reader.js'
import type { ThreadAnswer, ThreadQuestion, ThreadRequest } from './reference-thread-protocol.js'
import type { BatchSummary, ReferenceDecider, TypeOutcome } from './reference-work.js'
import type { ReferenceType } from './texts.js'

/*
 * The references sync's CPU work (scanning 100,000 rows, checking them, deciding each type on its 100,000
 * stored records) runs in a thread of its own. On the service's thread its tasks were cut into turns of a
 * millisecond or two, but its maps of 100,000 entries still made every garbage collection of the process
 * a pause of 6–25 ms for whatever request was waiting. A thread has a heap and a collector of its own, and
 * the system schedules it beside the service's thread rather than between its tasks. Measured against the
 * same work inline, in one run on one database (bench/results/2026-11-28-references-sync.md, seventh round), inline
 * left the orders reads a p99 1.11–1.37× the thread's during syncs: that is what the thread earns. One
 * thread for the process, started at the first sync and kept; concurrent syncs share it (their work
 * interleaves at its turns). If the thread dies (a fault, its heap limit), the syncs in flight answer 500,
 * their transactions roll back, and the next sync starts a new one.
 */

/**
 * The thread's heap: its old generation (a 100,000-row sync needs well under 100 MB) and a small young
 * generation. V8 sizes each thread's young generation like the main one's (up to 48 MB committed while
 * busy); the thread's collections hold no request up, so it may collect more often in less memory. With
 * the default, the server's peak RSS during a 100,000-row sync was 308–332 MB, with 8 MB 276–296 MB
 * (bench:references at its quick size, one run each).
 */
const THREAD_HEAP = { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 8 }

/** Under tsx (`npm start`, tests) the thread loads tsx first; the built service runs its .js files. */
function threadSource (): string {
  const typescript = import.meta.url.endsWith('.ts')
  const entry = new URL(typescript ? './reference-worker.ts' : './reference-worker.js', import.meta.url).href
  return typescript
    ? `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}) })`
    : `import(${JSON.stringify(entry)})`
}

class ReferenceThread {
  readonly worker: Worker
  /** Why the thread is gone, once it is. */
  stopped: Error | undefined
  private readonly calls = new Map<number, { resolve: (value: unknown) => void, reject: (err: Error) => void }>()
  private nextCall = 1

  constructor () {
    this.worker = new Worker(threadSource(), { eval: true, resourceLimits: THREAD_HEAP })
    // Not what keeps the process alive: the requests waiting for it are.
    this.worker.unref()
    this.worker.on('message', (message: ThreadAnswer) => {
      const call = this.calls.get(message.call)
      if (call === undefined) return
      this.calls.delete(message.call)
      if (message.ok) call.resolve(message.value)
      else if (message.invalidJson) call.reject(new RequestError.InvalidJson())
      else if (message.tooDeep) call.reject(new RequestError.JsonTooDeep(MAX_JSON_DEPTH))
      else call.reject(new Error(`references thread: ${message.message}`))
    })
    this.worker.on('error', (err) => this.stop(err))
    this.worker.on('exit', (code) => this.stop(new Error(`references thread exited (code ${code})`)))
  }

  private stop (reason: Error): void {
    this.stopped ??= reason
    for (const call of this.calls.values()) call.reject(this.stopped)
    this.calls.clear()
  }

  send (message: ThreadRequest, transfer?: ArrayBuffer[]): void {
    if (this.stopped === undefined) this.worker.postMessage(message, transfer)
  }

  ask<T> (message: ThreadQuestion): Promise<T> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped)
    const call = this.nextCall++
    return new Promise<T>((resolve, reject) => {
      this.calls.set(call, { resolve: resolve as (value: unknown) => void, reject })
      this.worker.postMessage({ ...message, call })
    })
  }
}

/** One request's work in the references thread: the body's bytes go in, the decisions come out. */
export class ReferenceJob implements JsonArraySink, ReferenceDecider {
  private summarized: Promise<BatchSummary> | undefined

  constructor (private readonly thread: ReferenceThread, private readonly job: number, maxRows: number) {
    thread.send({ op: 'open', job, maxRows })
  }

  write (bytes: Buffer): void {
    // A copy of its own, handed over (not copied again): the stream's buffers may be slices of a shared one.
    const own = new Uint8Array(bytes)
    this.thread.send({ op: 'write', job: this.job, bytes: own }, [own.buffer])
  }

  async end (): Promise<JsonArrayBody> {
    return await this.thread.ask<JsonArrayBody>({ op: 'end', job: this.job })
  }

  /** The same answer for every attempt of the transaction (it depends on the request only). */
  async summary (): Promise<BatchSummary> {
    this.summarized ??= this.thread.ask<BatchSummary>({ op: 'summary', job: this.job })
    return await this.summarized
  }

  async decide (type: ReferenceType, stored: string[]): Promise<TypeOutcome> {
    return await this.thread.ask<TypeOutcome>({ op: 'decide', job: this.job, type, stored })
  }

  /** The thread forgets the job (its rows and maps): once the request is answered, or failed. */
  close (): void {
    this.thread.send({ op: 'close', job: this.job })
  }
}

export class ReferenceEngine {
  private thread: ReferenceThread | undefined
  private nextJob = 1

  /** A job for one request, in the running thread, or a new one if there is none (or it died). */
  open (maxRows: number): ReferenceJob {
    if (this.thread === undefined || this.thread.stopped !== undefined) this.thread = new ReferenceThread()
    return new ReferenceJob(this.thread, this.nextJob++, maxRows)
  }

  /** The running thread, if any (tests stop it to see what a crash of it does). */
  get worker (): Worker | undefined {
    return this.thread?.stopped === undefined ? this.thread?.worker : undefined
  }

  async close (): Promise<void> {
    const thread = this.thread
    this.thread = undefined
    if (thread !== undefined && thread.stopped === undefined) await thread.worker.terminate()
  }
}
