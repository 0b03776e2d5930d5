import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { checkSchema, publish } from '../../scripts/check-schema.js'

/*
 * The schema gate (`npm run check:schema` in .ci/run) on a copy of this repository's contract in a git
 * repository of its own: a removed field fails it, an added one passes, and a breaking change passes only
 * when it moves the published snapshot and CHANGELOG.md lists it under "Breaking".
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const FILES = ['schema.graphql', 'schema/rest.json', 'schema/published/schema.graphql', 'schema/published/rest.json', 'CHANGELOG.md']

interface Checkout {
  dir: string
  edit: (file: string, change: (text: string) => string) => void
  commit: (message: string) => void
  gate: () => Promise<{ ok: boolean, out: string }>
}

function checkout (t: Test): Checkout {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-gate-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const file of FILES) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
    copyFileSync(path.join(ROOT, file), path.join(dir, file))
  }
  const git = (...args: string[]): void => { execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, stdio: 'ignore' }) }
  git('init', '-q')
  git('add', '-A')
  git('commit', '-q', '-m', 'the contract as published')
  return {
    dir,
    edit: (file, change) => writeFileSync(path.join(dir, file), change(readFileSync(path.join(dir, file), 'utf8'))),
    commit: (message) => { git('add', '-A'); git('commit', '-q', '--allow-empty', '-m', message) },
    gate: async () => {
      const lines: string[] = []
      const ok = await checkSchema(dir, (line) => lines.push(line))
      return { ok, out: lines.join('\n') }
    }
  }
}

t.test('the repository\'s own contract passes', async (t) => {
  const { gate } = checkout(t)
  const { ok, out } = await gate()
  t.ok(ok, out)
  t.match(out, /schema gate: pass/)
})

t.test('a removed GraphQL field fails; an added one passes and is listed as safe', async (t) => {
  const removed = checkout(t)
  removed.edit('schema.graphql', (s) => s.replace(/\n\s*retailerName: String!/, ''))
  const failed = await removed.gate()
  t.notOk(failed.ok, 'a removed field fails the gate')
  t.match(failed.out, /breaking \(1\):\n\s+Order\.retailerName: Field 'retailerName' was removed from object type 'Order'/)
  t.match(failed.out, /FAIL: 1 breaking change/)

  // Safe changes not yet published (`npm run schema:publish`) are listed too; the field and its description: two more.
  const pending = Number(/safe \((\d+)\)/.exec((await checkout(t).gate()).out)?.[1] ?? 0)
  const added = checkout(t)
  added.edit('schema.graphql', (s) => s.replace(/retailerName: String!/, 'retailerName: String!\n  """A new field"""\n  retailerCity: String'))
  const passed = await added.gate()
  t.ok(passed.ok, passed.out)
  t.match(passed.out, new RegExp(`safe \\(${pending + 2}\\):\\n\\s+Order\\.retailerCity: Field 'retailerCity' was added to object type 'Order'`))

  const enumValue = checkout(t)
  enumValue.edit('schema.graphql', (s) => s.replace(/enum OrderStatus \{/, 'enum OrderStatus {\n  ON_HOLD'))
  const dangerous = await enumValue.gate()
  t.ok(dangerous.ok, 'a new enum value does not fail the gate')
  t.match(dangerous.out, /dangerous \(1\):\n\s+OrderStatus\.ON_HOLD/, 'but is listed as dangerous')
})

t.test('REST: a removed response field or a newly required request field fails; a new response field passes', async (t) => {
  const removed = checkout(t)
  removed.edit('schema/rest.json', (s) => {
    const contract = JSON.parse(s)
    delete contract.endpoints.statusUpdate.responses['200'].properties.data.properties.failed
    return JSON.stringify(contract)
  })
  const failed = await removed.gate()
  t.notOk(failed.ok)
  t.match(failed.out, /POST \/v2\/accounting\/orders\/update-status 200 data\.failed: field removed/)

  const required = checkout(t)
  required.edit('schema/rest.json', (s) => {
    const contract = JSON.parse(s)
    const request = contract.endpoints.statusUpdate.request
    request.properties.batchRef = { type: 'string' }
    request.required.push('batchRef')
    return JSON.stringify(contract)
  })
  const refused = await required.gate()
  t.notOk(refused.ok)
  t.match(refused.out, /update-status request batchRef: new required field/)

  const added = checkout(t)
  added.edit('schema/rest.json', (s) => {
    const contract = JSON.parse(s)
    contract.endpoints.shipmentSync.responses['200'].properties.data.properties.elapsedMs = { type: 'integer' }
    return JSON.stringify(contract)
  })
  const passed = await added.gate()
  t.ok(passed.ok, passed.out)
  t.match(passed.out, /PUT \/v2\/shipments\/outstanding\/sync-data 200 data\.elapsedMs: field added/)
})

t.test('REST: path parameters and the query string are requests too; a body where there was none breaks', async (t) => {
  const repo = checkout(t)
  await publish(repo.dir)
  repo.commit('the webhook endpoints published')
  t.ok((await repo.gate()).ok, 'published as they are: nothing pending')
  const edit = (change: (endpoints: Record<string, any>) => void) => repo.edit('schema/rest.json', (s) => {
    const contract = JSON.parse(s)
    change(contract.endpoints)
    return JSON.stringify(contract)
  })
  const deliveries = 'GET /v2/webhooks/endpoints/{id}/deliveries'

  edit((e) => { e.webhookAttemptList.query.properties.order = { type: 'string' } })
  const added = await repo.gate()
  t.ok(added.ok, added.out)
  t.match(added.out, `${deliveries} query order: field added`)

  edit((e) => { e.webhookAttemptList.query.required = ['limit'] })
  const required = await repo.gate()
  t.notOk(required.ok)
  t.match(required.out, `${deliveries} query limit: now required`)

  edit((e) => {
    e.webhookAttemptList.query.required = []
    e.webhookEndpointDelete.request = { type: 'object', properties: {} }
    e.webhookEndpointUpdate.params.properties.id.maxLength = 36
  })
  const body = await repo.gate()
  t.notOk(body.ok)
  t.match(body.out, 'DELETE /v2/webhooks/endpoints/{id} request: now requires a body')
  t.match(body.out, 'PATCH /v2/webhooks/endpoints/{id} params id: narrower: maxLength 100 → 36')
})

t.test('a breaking change passes only when published and listed under "Breaking" in CHANGELOG.md', async (t) => {
  const repo = checkout(t)
  repo.edit('schema.graphql', (s) => s.replace(/\n\s*retailerName: String!/, ''))
  await publish(repo.dir)
  const unlisted = await repo.gate()
  t.notOk(unlisted.ok, 'published but not in the changelog')
  t.match(unlisted.out, /uncommitted change to schema\/published\/: breaking change Order\.retailerName .* is not listed/)

  repo.commit('remove Order.retailerName')
  const committed = await repo.gate()
  t.notOk(committed.ok, 'still failing once committed: every move of the snapshot is checked')
  t.match(committed.out, /remove Order\.retailerName: breaking change Order\.retailerName/)

  repo.edit('CHANGELOG.md', (s) => `${s}\n## Unreleased\n\n### Added\n\n- \`Order.retailerName\` is mentioned here, but not as breaking\n`)
  t.notOk((await repo.gate()).ok, 'a mention outside a Breaking section does not count')
  repo.edit('CHANGELOG.md', (s) => `${s}\n### Breaking\n\n- \`Order.retailerName\` removed: use \`retailer.name\`.\n`)
  const listed = await repo.gate()
  t.ok(listed.ok, listed.out)
  t.match(listed.out, /1 move\(s\) of schema\/published\/ checked, 0 undocumented/)

  // The command CI runs, on this checkout.
  const tsx = path.join(ROOT, 'node_modules/tsx/dist/cli.mjs')
  const run = (): number => {
    try { execFileSync(process.execPath, [tsx, path.join(ROOT, 'scripts/check-schema.ts'), '--root', repo.dir], { stdio: 'ignore' }); return 0 } catch (err) { return (err as { status: number }).status }
  }
  t.equal(run(), 0, 'npm run check:schema exits 0')
  repo.edit('schema.graphql', (s) => s.replace(/\n\s*orderNumber: String!/, ''))
  t.equal(run(), 1, 'and 1 on a breaking change')
})
