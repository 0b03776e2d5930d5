import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { cliPage, CLI_PAGE } from './docs/cli.js'
import { configurationPage, CONFIGURATION_PAGE } from './docs/configuration.js'
import { errorCodes, ERROR_CODES_PAGE } from './docs/error-codes.js'
import { metricsPage, METRICS_PAGE, registeredMetrics } from './docs/metrics.js'

/*
 * The reference pages written from the source, never by hand: error codes and messages from the texts
 * tables, configuration from ConfigSchema, metrics from their registrations, the CLI's usage from its
 * command table. `npm run generate` writes them into docs/; scripts/check-drift.sh fails CI when the
 * committed pages differ. `npx tsx scripts/generate-docs.ts <dir>` writes them under another folder instead.
 */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** Each page's path from the repository's root, and its text. */
export async function generatedDocs (root: string = ROOT): Promise<Map<string, string>> {
  const { metrics, defaultPrefix } = await registeredMetrics()
  return new Map([
    [ERROR_CODES_PAGE, await errorCodes(root)],
    [CONFIGURATION_PAGE, configurationPage()],
    [METRICS_PAGE, metricsPage(metrics, defaultPrefix)],
    [CLI_PAGE, cliPage()]
  ])
}

export async function writeDocs (into: string, root: string = ROOT): Promise<string[]> {
  const pages = await generatedDocs(root)
  for (const [file, text] of pages) {
    mkdirSync(path.dirname(path.join(into, file)), { recursive: true })
    writeFileSync(path.join(into, file), text)
  }
  return [...pages.keys()]
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const into = path.resolve(process.argv[2] ?? ROOT)
  for (const file of await writeDocs(into)) process.stdout.write(`${path.relative(process.cwd(), path.join(into, file))}\n`)
}
