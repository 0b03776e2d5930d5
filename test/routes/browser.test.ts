import { existsSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { serve, type Served } from '../helpers/client.js'
import { restEndpoints } from '../../src/routes/rest-contract.js'

/*
 * The explorers in a real headless browser (Debian's chromium, driven by playwright-core): a newcomer
 * opens /docs and tries the status update with a key, opens /graphiql, pastes a token and reads orders.
 * Screenshots land in test-artifacts/. Without a browser on the machine the file says so and skips
 * (.ci/run installs Debian's chromium first); CHROMIUM_PATH points at another one.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const ARTIFACTS = path.join(ROOT, 'test-artifacts')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** A fresh browser page; `problems` lists script errors and assets that failed or came from elsewhere. */
async function openBrowser (t: Test): Promise<{ page: Page, problems: string[] }> {
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    // As root in a sandbox without user namespaces; the rest keeps Chromium off a closed network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
  t.teardown(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('response', (response) => { if (response.status() >= 400 && !response.url().includes('/v2/')) problems.push(`${response.status()} ${response.url()}`) })
  page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`))
  return { page, problems }
}

async function shot (page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true })
  await page.screenshot({ path: path.join(ARTIFACTS, name) })
}

if (!existsSync(CHROMIUM)) {
  t.comment(`no browser at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH; browser tests skipped`)
  t.pass('skipped: no browser')
} else {
  t.test('/docs: every REST endpoint listed; the status update tried from the page with an API key', async (t) => {
    const served: Served = await serve(t, { orders: 60 })
    const [placed] = await served.database.sql`select id from orders where seller_id = 1 and not is_deleted and status = 'ORDER_PLACED' order by id limit 1`
    const { page, problems } = await openBrowser(t)
    await page.goto(`${served.baseUrl}/docs/`)
    await page.waitForSelector('.opblock')
    const listed = (await page.locator('.opblock-summary-path').allTextContents()).map((p) => p.replace(/\u200b/g, ''))
    t.same(listed.sort(), Object.values(restEndpoints).map((e) => e.path).sort(),
      'every endpoint of the REST contract: the seller\'s and the marketplace\'s')

    await page.click('.btn.authorize')
    const bearer = page.locator('.auth-container').filter({ hasText: 'apiKeyBearer' })
    await bearer.locator('input').fill(served.apiKey)
    await bearer.locator('button.authorize').click()
    await page.click('.btn-done')

    const operation = page.locator('#operations-Accounting-updateOrderStatuses')
    await operation.locator('.opblock-summary').click()
    const tryOut = operation.locator('.try-out__btn')
    if ((await tryOut.textContent())?.trim() === 'Try it out') await tryOut.click()
    await operation.locator('.body-param__text').fill(JSON.stringify({ order_status: [{ Order_id: Number(placed!.id), Order_Status: 'ORDER_ACCEPTED' }] }))
    await operation.locator('.execute').click()
    const status = operation.locator('.live-responses-table tbody .response-col_status')
    await status.first().waitFor()
    t.equal((await status.first().textContent())?.trim(), '200', 'the page shows the answer')
    t.match(await operation.locator('.live-responses-table tbody .microlight').first().textContent(), /Order statuses updated successfully/)
    const [after] = await served.database.sql`select status from orders where id = ${placed!.id}`
    t.equal(after!.status, 'ORDER_ACCEPTED', 'the order really changed')
    await shot(page, 'docs-status-update.png')
    t.same(problems, [], 'no script error, no asset missing, nothing fetched from elsewhere')
  })

  t.test('/graphiql: paste a token in Headers, run the default orders query, see orders', async (t) => {
    const served: Served = await serve(t, { orders: 60 })
    const { page, problems } = await openBrowser(t)
    await page.goto(`${served.baseUrl}/graphiql`)
    await page.waitForSelector('.graphiql-execute-button')
    t.match(await page.locator('.graphiql-query-editor').textContent(), /query Orders\(\$input: OrderListInput\)/, 'the contract\'s query in the default tab')

    // Without a token the call is refused, as any call without one.
    await page.click('.graphiql-execute-button')
    await page.waitForFunction(() => (globalThis as any).document.querySelector('.result-window')?.textContent?.includes('UNAUTHENTICATED'))

    await page.getByRole('button', { name: 'Headers' }).click()
    await page.locator('.graphiql-editor-tool .CodeMirror:visible').first().click()
    await page.keyboard.press('Control+A')
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${served.accessToken}` }))
    await page.click('.graphiql-execute-button')
    await page.waitForFunction(() => (globalThis as any).document.querySelector('.result-window')?.textContent?.includes('hasNext'))
    const result = (await page.locator('.result-window').textContent()) ?? ''
    t.match(result, /"limit":\s*5/, 'the default variables: page 1, limit 5')
    const [first] = await served.database.sql`select order_number from orders where seller_id = 1 and not is_deleted order by created_at, id limit 1`
    t.match(result, first!.order_number as string, 'the seller\'s first order')
    await shot(page, 'graphiql-orders.png')
    t.same(problems, [], 'no script error, no asset missing, nothing fetched from elsewhere')
  })
}
