/*
 * The CLI's commands as one table: `order-exchange --help` prints it (main.ts) and
 * scripts/generate-docs.ts writes docs/operate/cli-reference.md from it, so the usage is written once.
 * A command's parsing stays in main.ts; a new command or option is added here too.
 */

export interface CommandUsage {
  /** The command words, as typed after `order-exchange`. */
  readonly command: string
  /** Its arguments, one entry per line of --help (the author's break; the reference joins them). */
  readonly args: readonly string[]
  /** What it does, in --help: lower case, no final stop. */
  readonly summary: string
  /** What the reference page adds (Markdown, links relative to docs/operate/). */
  readonly details: string
}

export const COMMANDS: readonly CommandUsage[] = [
  {
    command: 'migrate',
    args: [],
    summary: 'apply database migrations',
    details: 'Also done at every start, under an advisory lock so instances never race.'
  },
  {
    command: 'seed',
    args: ['[--orders N] [--seed S] [--anchor ISO] [--json]'],
    summary: 'load deterministic demo data (default 1000 orders, seed 1)',
    details: 'The same seed and anchor give the same rows. Three sellers: active with plenty of points, active ' +
      'with too few points to accept its orders, suspended. `--json` prints each seller\'s companyId, storeIds, ' +
      'status, points balance and order count.'
  },
  {
    command: 'credentials issue',
    args: ['--seller <companyId> --kind access-token|api-key', '[--environment testing|production] [--stores 1,2] [--label TEXT]'],
    summary: 'issue a credential; prints the secret alone on stdout',
    details: 'The secret is shown only now. `--stores` narrows it to those stores; `--environment` defaults to ' +
      '`ORDER_EXCHANGE_ENV`.'
  },
  {
    command: 'credentials issue',
    args: ['--kind platform-key [--environment testing|production] [--label TEXT]'],
    summary: 'issue the marketplace\'s platform key (no seller)',
    details: 'The key (`oxs_test_pk_…`) is bound to no seller ([the marketplace\'s API](../platform/api.md)); ' +
      'printed alone on stdout, shown only now.'
  },
  {
    command: 'credentials list',
    args: ['[--seller <companyId>] [--json]'],
    summary: 'list credentials (never secrets)',
    details: 'Each with its kind, environment, stores, whether it is revoked, and when it was last used.'
  },
  {
    command: 'credentials revoke',
    args: ['<id>'],
    summary: 'revoke a credential',
    details: 'The next request with it is `401`.'
  },
  {
    command: 'worker',
    args: [],
    summary: 'run the effects worker alone (notifications, refunds, auto-rejections) until SIGINT/SIGTERM',
    details: 'Webhook deliveries too; a signal lets the jobs in hand finish. Run API instances with ' +
      '`WORKER_ENABLED=false` to scale the two apart ([notifications and jobs](effects.md)).'
  }
]

/** What every command connects to. */
export const CONNECTS_TO = 'Uses DATABASE_URL, or the embedded PostgreSQL under DATA_DIR when it is unset.'

/** The process's exit codes: scripts branch on them. */
export const EXIT = { done: 0, failed: 1, usage: 2 } as const

export const EXIT_MEANING: Record<keyof typeof EXIT, string> = {
  done: 'done',
  failed: 'failed: the message on stderr (also `--help`\'s usage when no command is given)',
  usage: 'bad usage: the message and the usage on stderr'
}

/** Where a command's summary starts in --help, and how wide it may be before it wraps. */
const SUMMARY_COLUMN = 46
const SUMMARY_WIDTH = 58

/** Words of `text` in lines of at most `width` characters. */
function wrap (text: string, width: number): string[] {
  const lines: string[] = []
  for (const word of text.split(' ')) {
    const last = lines.at(-1)
    if (last !== undefined && last.length + 1 + word.length <= width) lines[lines.length - 1] = `${last} ${word}`
    else lines.push(word)
  }
  return lines
}

/** A command as one line (the reference page's form). */
export function commandLine (c: CommandUsage): string {
  return [c.command, ...c.args].join(' ')
}

/** `order-exchange --help`: each command, its arguments as broken above, its summary in a column. */
export function usage (): string {
  const lines = ['Usage: order-exchange <command>', '', 'Commands:']
  for (const c of COMMANDS) {
    const head = c.args.map((a, i) => i === 0 ? `  ${c.command} ${a}` : `  ${' '.repeat(c.command.length + 1)}${a}`)
    if (head.length === 0) head.push(`  ${c.command}`)
    const summary = wrap(c.summary, SUMMARY_WIDTH)
    const last = head[head.length - 1]!
    // The summary starts on the command's last line when it fits before the column, else below it.
    if (last.length + 2 <= SUMMARY_COLUMN) head[head.length - 1] = last.padEnd(SUMMARY_COLUMN) + summary.shift()!
    lines.push(...head, ...summary.map((s) => ' '.repeat(SUMMARY_COLUMN) + s))
  }
  lines.push('', CONNECTS_TO)
  return lines.join('\n')
}
