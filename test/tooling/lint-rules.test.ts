import t from 'tap'
import { ESLint } from 'eslint'
import { ROOT } from '../helpers/server-process.js'

/*
 * The structure rules of eslint.config.js really fire: a rule that is misconfigured (an import-x
 * resolver or parser missing) passes everything silently, so each is tried on a violation here.
 */

const eslint = new ESLint({ cwd: ROOT })

async function rulesHit (filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}/${filePath}` })
  return result.messages.map((m) => m.ruleId ?? m.message)
}

t.test('a lower layer importing a higher one is an error', async (t) => {
  t.ok((await rulesHit('src/db/probe.ts', "import { GRAPHQL_PATH } from '../graphql/route.js'\nexport const x = GRAPHQL_PATH\n")).includes('import-x/no-restricted-paths'), 'base → graphql')
  t.ok((await rulesHit('src/orders/probe.ts', "import { STATUS_UPDATE_PATH } from '../routes/rest-contract.js'\nexport const x = STATUS_UPDATE_PATH\n")).includes('import-x/no-restricted-paths'), 'service → route')
  t.ok((await rulesHit('src/effects/probe.ts', "import { changeOrderStatus } from '../status-update/change-status.js'\nexport const x = changeOrderStatus\n")).includes('import-x/no-restricted-paths'), 'effects → status-update')
  t.ok((await rulesHit('src/outbound/probe.ts', "import { logTransport } from '../effects/transports/log.js'\nexport const x = logTransport\n")).includes('import-x/no-restricted-paths'), 'outbound (base) → effects')
  t.same(await rulesHit('src/routes/probe.ts', "import { updateOrderStatuses } from '../status-update/update-batch.js'\nexport const x = updateOrderStatuses\n"), [], 'a route calling a service is fine')
})

t.test('an import cycle is an error', async (t) => {
  // factory.ts imports types.ts: types.ts importing factory.ts closes a cycle.
  const hit = await rulesHit('src/effects/transports/types.ts', "import { createTransports } from './factory.js'\nexport const x = createTransports\n")
  t.ok(hit.includes('import-x/no-cycle'))
})

t.test('a fixed pause in a test is an error; the allowed helpers may use a timer', async (t) => {
  const pause = 'export async function pause (): Promise<void> { await new Promise((resolve) => setTimeout(resolve, 500)) }\n'
  t.ok((await rulesHit('test/effects/probe.test.ts', pause)).includes('no-restricted-globals'), 'setTimeout in a test file')
  t.ok((await rulesHit('test/helpers/probe.ts', 'export const churn = setInterval(() => {}, 5)\n')).includes('no-restricted-globals'),
    'setInterval in a helper that is not allowed one')
  t.ok((await rulesHit('test/effects/probe.test.ts', "import { setTimeout as wait } from 'node:timers/promises'\nawait wait(500)\n"))
    .includes('no-restricted-imports'), 'timers/promises')
  t.ok((await rulesHit('test/effects/probe.test.ts', 'declare function sleep (ms: number): Promise<void>\nawait sleep(500)\n'))
    .includes('no-restricted-syntax'), 'a sleep() call')
  t.ok((await rulesHit('test/effects/probe.test.ts', 'globalThis.setTimeout(() => {}, 500)\n')).includes('no-restricted-properties'),
    'globalThis.setTimeout')
  t.same(await rulesHit('test/helpers/receiver.ts', pause), [], 'an allowed helper (a receiver slow on purpose)')
  t.same(await rulesHit('src/effects/probe.ts', pause), [], 'the service itself is not concerned')
})
