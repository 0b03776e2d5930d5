import type { TaskList } from 'graphile-worker'
import type { Tracing } from '../tracing/tracing.js'
import type { JobTrace } from './jobs.js'

/*
 * A span for each job the worker runs, with its statements inside. A job whose payload carries the
 * traceparent of the span that enqueued it (enqueue.ts) continues that trace as its child: one status
 * batch is one trace, its refund jobs included, however much later and in whichever process they run,
 * and the sampling decision taken for the request holds for its jobs. A job without one (cron, a job
 * enqueued with tracing off) starts a trace of its own.
 */

export function tracedTasks (tracing: Tracing, tasks: TaskList): TaskList {
  return Object.fromEntries(Object.entries(tasks).map(([task, run]) => [task, async (payload, helpers) => {
    const traceparent = (payload as JobTrace | null)?.traceparent
    return await tracing.span(`process ${task}`, {
      kind: 'consumer',
      parent: typeof traceparent === 'string' ? traceparent : undefined,
      attributes: {
        'messaging.system': 'graphile_worker',
        'messaging.operation.type': 'process',
        'messaging.destination.name': task,
        'messaging.message.id': String(helpers.job.id),
        'order_exchange.job.attempt': helpers.job.attempts,
        'order_exchange.job.max_attempts': helpers.job.max_attempts
      }
    }, async () => await run!(payload, helpers))
  }]))
}
