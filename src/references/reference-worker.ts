import { parentPort, type MessagePort } from 'node:worker_threads'
import { RequestError } from '../errors.js'
import type { ThreadAnswer, ThreadRequest } from './reference-thread-protocol.js'
import { ReferenceWork } from './reference-work.js'

/*
 * The references thread's entry (started by reference-engine.ts): each job's messages run one after the
 * other on its ReferenceWork; jobs of concurrent requests interleave at the work's turns.
 */

interface Job {
  work: ReferenceWork
  /** The job's last message handled so far: the next one waits for it. */
  tail: Promise<void>
  /** A write that failed (it should not: a syntax error is kept for `end`): every later answer is that error. */
  failed?: unknown
}

if (parentPort === null) throw new Error('reference-worker.ts runs as a worker thread (reference-engine.ts)')
const port: MessagePort = parentPort
const jobs = new Map<number, Job>()

function answer (call: number, step: () => unknown): (job: Job) => Promise<void> {
  return async (job) => {
    let message: ThreadAnswer
    try {
      if (job.failed !== undefined) throw job.failed
      message = { call, ok: true, value: await step() as never }
    } catch (err) {
      message = {
        call,
        ok: false,
        invalidJson: err instanceof RequestError.InvalidJson,
        tooDeep: err instanceof RequestError.JsonTooDeep,
        message: err instanceof Error ? err.message : String(err)
      }
    }
    port.postMessage(message)
  }
}

port.on('message', (request: ThreadRequest) => {
  if (request.op === 'open') {
    jobs.set(request.job, { work: new ReferenceWork(request.maxRows), tail: Promise.resolve() })
    return
  }
  const job = jobs.get(request.job)
  if (job === undefined) return // closed: the request is over
  let step: (job: Job) => Promise<void>
  switch (request.op) {
    case 'write': {
      const { bytes } = request
      step = async (job) => {
        if (job.failed !== undefined) return
        try {
          await job.work.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
        } catch (err) {
          job.failed = err
        }
      }
      break
    }
    case 'end': step = answer(request.call, () => job.work.end()); break
    case 'summary': step = answer(request.call, () => job.work.summary()); break
    case 'decide': step = answer(request.call, () => job.work.decide(request.type, request.stored)); break
    case 'close': jobs.delete(request.job); return
  }
  job.tail = job.tail.then(() => step(job))
})
