import { ReferenceEngine, type ReferenceJob } from '../../src/references/reference-engine.js'
import { ReferenceWork, type BatchSummary } from '../../src/references/reference-work.js'

/*
 * Preloaded (`--import`) into the second server of BENCH_INLINE_CYCLES (run.ts): its references syncs run
 * the same ReferenceWork on the service's own thread, no worker, so that the thread and inline are measured
 * in one bench run, on one database, under the same noise (issue 40.5: the thread stays only if it earns
 * its keep). Patched here rather than switched in src/, so that the service carries no mode for a bench.
 */

class InlineJob extends ReferenceWork {
  private summarized: Promise<BatchSummary> | undefined

  /** Once per request, as the thread's job answers it: a retried transaction does not redo it. */
  override async summary (): Promise<BatchSummary> {
    this.summarized ??= super.summary()
    return await this.summarized
  }

  close (): void {}
}

let told = false
ReferenceEngine.prototype.open = function open (maxRows: number): ReferenceJob {
  if (!told) {
    // In the bench's output: proof that the patch reached the server's engine (one module instance).
    console.error('[inline-work] references sync runs inline on the service thread')
    told = true
  }
  return new InlineJob(maxRows) as unknown as ReferenceJob
}
