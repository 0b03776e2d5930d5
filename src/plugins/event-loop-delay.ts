import { performance } from 'node:perf_hooks'

/*
 * How far behind the event loop runs, measured, for load shedding (load-shedding.ts). @fastify/under-pressure
 * reads a sample in which its histogram recorded nothing (the loop was held across the whole sample, and a
 * reset drops the histogram's next measurement) as an infinite delay: a single 120–500 ms stall then shed at
 * a 1,000 ms bound. Here a ticker due every RESOLUTION_MS records how late each of its turns ran, and a sample
 * is the mean of those waits since the last sample (as under-pressure's), or, when the ticker's turn is
 * overdue right now, how long it has waited so far if that is longer: always a delay that a callback really
 * waited, never a guess.
 */

const RESOLUTION_MS = 10

export class EventLoopDelay {
  private ticker: NodeJS.Timeout | null = null
  private sampler: NodeJS.Timeout | null = null
  private waited = 0
  private turns = 0
  /** When the ticker's next turn is due. */
  private due = performance.now()
  /** The last sample's delay, in milliseconds. */
  delayMs = 0

  constructor (private readonly sampleMs: number) {}

  start (): void {
    this.tick(performance.now() + RESOLUTION_MS)
    this.sampler = setInterval(() => this.sample(), this.sampleMs)
    this.sampler.unref()
  }

  private tick (due: number): void {
    this.due = due
    this.ticker = setTimeout(() => {
      const now = performance.now()
      this.waited += now - due
      this.turns++
      this.tick(now + RESOLUTION_MS)
    }, RESOLUTION_MS)
    this.ticker.unref()
  }

  /** Takes a sample now (the timer's; a test calls it to read a stall at once). */
  sample (): number {
    const now = performance.now()
    const mean = this.turns > 0 ? this.waited / this.turns : 0
    this.delayMs = Math.max(0, now - this.due, mean)
    this.waited = this.turns = 0
    return this.delayMs
  }

  stop (): void {
    if (this.ticker) clearTimeout(this.ticker)
    if (this.sampler) clearInterval(this.sampler)
    this.ticker = this.sampler = null
  }
}
