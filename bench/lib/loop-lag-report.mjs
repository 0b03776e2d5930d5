/*
 * Reads a loop-lag-trace.mjs record beside the same process's V8 CPU profile: for each late tick after
 * FROM seconds into the profile, its start, its length, the collections inside it, and the functions the
 * profile sampled meanwhile (the service's own frames; "(idle)" means the process was not scheduled).
 *
 *   node bench/lib/loop-lag-report.mjs <profile.cpuprofile> <loop-lag-pid.json> [FROM seconds] [MIN ms]
 */
import fs from 'node:fs'

const [profileFile, traceFile, from = '0', min = '5'] = process.argv.slice(2)
const profile = JSON.parse(fs.readFileSync(profileFile, 'utf8'))
const trace = JSON.parse(fs.readFileSync(traceFile, 'utf8'))
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)

/** The two innermost frames outside node_modules (or the VM's own: idle, program, collector). */
function label (id) {
  const frames = []
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const f = byId.get(cur).callFrame
    if ((f.url && !f.url.includes('node_modules')) || /garbage|idle|program/.test(f.functionName)) {
      frames.push(`${f.functionName}@${f.url.split('/').pop()}`)
    }
  }
  return frames.slice(0, 2).join(' < ')
}

const samples = []
let t = profile.startTime
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i]
  samples.push([t, profile.samples[i]])
}
for (const [end, lateMs] of trace.lateTicks) {
  const start = end - lateMs * 1000
  const at = (start - profile.startTime) / 1e6
  if (at < Number(from) || lateMs < Number(min)) continue
  const seen = new Map()
  for (const [ts, id] of samples) if (ts >= start && ts <= end) seen.set(label(id), (seen.get(label(id)) ?? 0) + 1)
  const gcs = trace.collections
    .filter(([st, ms]) => { const a = trace.origin + st * 1000; return a < end && a + ms * 1000 > start })
    .map(([, ms, kind]) => `gc(kind ${kind}) ${ms} ms`)
  const top = [...seen].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([l, n]) => `${n} ${l}`)
  console.log(`${at.toFixed(3)} s  ${lateMs} ms  ${gcs.join(', ')}  ::  ${top.join(' | ')}`)
}
