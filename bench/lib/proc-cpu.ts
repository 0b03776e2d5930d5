import fs from 'node:fs'

/*
 * CPU time of processes from /proc/<pid>/stat, for the benchmarks that time a server and its load
 * generator from outside. Linux only; USER_HZ is 100 on every kernel these benchmarks run on.
 */

const TICK_MS = 1000 / 100

export interface ProcCpu {
  ppid: number
  /** The process's own user + system time, ms. */
  ownMs: number
  /** Its exited and reaped children's user + system time, ms. */
  childrenMs: number
}

/** The figures of one /proc/<pid>/stat text. */
export function parseProcStat (stat: string): ProcCpu {
  // After the command name in parentheses: field 3 (state) is fields[0], so field N is fields[N - 3]:
  // ppid 4, utime 14, stime 15, cutime 16, cstime 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return {
    ppid: Number(fields[1]),
    ownMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS,
    childrenMs: (Number(fields[13]) + Number(fields[14])) * TICK_MS
  }
}

/** The figures of every live process, by pid (a process that ends while being read is left out). */
export function allProcCpu (): Map<number, ProcCpu> {
  const all = new Map<number, ProcCpu>()
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try { stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8') } catch { continue }
    all.set(Number(entry), parseProcStat(stat))
  }
  return all
}
