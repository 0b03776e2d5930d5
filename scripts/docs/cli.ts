import { COMMANDS, CONNECTS_TO, EXIT, EXIT_MEANING, commandLine, type CommandUsage } from '../../src/cli/commands.js'
import { code, page, table } from './markdown.js'

/*
 * docs/operate/cli-reference.md from the CLI's command table (src/cli/commands.ts), the one `--help`
 * prints: each command as typed, what it does, and the exit codes.
 */

export const CLI_PAGE = 'docs/operate/cli-reference.md'

/** The help's summary as a sentence, then what the reference adds. */
function whatItDoes (c: CommandUsage): string {
  return `${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}. ${c.details}`
}

export function cliPage (commands: readonly CommandUsage[] = COMMANDS): string {
  return page(['the command table in `src/cli/commands.ts`'], [
    '# CLI reference',
    'Every command of `order-exchange`, as `--help` lists them: `npx order-exchange <command>` from a checkout, ' +
      `\`node dist/cli/run.js <command>\` in the image ([the CLI](cli.md)). ${CONNECTS_TO.replace(/\b([A-Z][A-Z_]+)\b/g, '`$1`')}`,
    table(['Command', 'What it does'], commands.map((c) => [code(commandLine(c)), whatItDoes(c)])),
    '## Exit codes',
    table(['Code', 'Meaning'], (Object.keys(EXIT) as Array<keyof typeof EXIT>).map((k) => [code(String(EXIT[k])), EXIT_MEANING[k]]))
  ])
}
