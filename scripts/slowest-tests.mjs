// Prints the slowest test files of the last tap run (tap keeps each file's output in .tap/test-results,
// ending with `# time=…ms`): where a run's time goes, printed by .ci/run after every suite.
import fs from 'node:fs'
import path from 'node:path'

const dir = '.tap/test-results'
const count = Number(process.argv[2] ?? 10)
const times = []
const walk = (d) => {
  for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, entry.name)
    if (entry.isDirectory()) walk(p)
    else if (entry.name.endsWith('.tap')) {
      const found = [...fs.readFileSync(p, 'utf8').matchAll(/^# time=([\d.]+)ms$/gm)].at(-1)
      if (found) times.push([Number(found[1]) / 1000, path.relative(dir, p).replace(/\.tap$/, '')])
    }
  }
}
if (!fs.existsSync(dir)) {
  console.log('no test results in .tap/test-results')
  process.exit(0)
}
walk(dir)
times.sort((a, b) => b[0] - a[0])
const total = times.reduce((sum, [s]) => sum + s, 0)
console.log(`slowest ${Math.min(count, times.length)} of ${times.length} test files (all files: ${total.toFixed(0)} s of test time):`)
for (const [s, file] of times.slice(0, count)) console.log(`${s.toFixed(1).padStart(8)} s  ${file}`)
