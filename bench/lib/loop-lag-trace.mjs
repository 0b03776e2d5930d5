/*
 * Where a server's event loop was held, for a bench run (bench/results/2026-11-27-references-sync.md, fourth round):
 *
 *   NODE_OPTIONS="--import ./bench/lib/loop-lag-trace.mjs" BENCH_CPU_PROF=/tmp/prof \
 *     BENCH_BACKGROUND_ORDERS=100000 npm run bench:references
 *   node bench/lib/loop-lag-report.mjs /tmp/prof/CPU.*.0.001.cpuprofile /tmp/loop-lag-<server pid>.json 12
 *
 * Every process that loads it (the bench's too) ticks a 1 ms timer and records each tick that came more
 * than 5 ms late — its end in monotonic microseconds (the CPU profile's clock) and the delay — and every
 * garbage collection over 2 ms; it writes them to LOOP_LAG_DIR (/tmp) as loop-lag-<pid>.json on exit. A late
 * tick is a task that held the loop, a collection, or the process not scheduled (the profile tells which).
 */
import fs from 'node:fs'
import path from 'node:path'
import { PerformanceObserver } from 'node:perf_hooks'

const lateTicks = []
const collections = []
const micros = () => Number(process.hrtime.bigint() / 1000n)
let last = micros()
setInterval(() => {
  const now = micros()
  const lateMs = (now - last) / 1000 - 1
  if (lateMs > 5) lateTicks.push([now, Math.round(lateMs)])
  last = now
}, 1).unref()
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.duration > 2) collections.push([Math.round(e.startTime), Math.round(e.duration), e.detail?.kind])
  }
}).observe({ entryTypes: ['gc'] })
process.on('exit', () => {
  const file = path.join(process.env.LOOP_LAG_DIR ?? '/tmp', `loop-lag-${process.pid}.json`)
  const origin = micros() - performance.now() * 1000
  try { fs.writeFileSync(file, JSON.stringify({ lateTicks, collections, origin })) } catch { /* a diagnostic only */ }
})
