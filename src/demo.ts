import type { Config } from './config.js'
import type { Database } from './db/client.js'
import { issueCredential } from './credentials/service.js'
import { isEmpty, seed, type SeedSummary } from './seed/seed.js'

export interface DemoCredentials { companyId: number, name: string, accessToken: string, apiKey: string }

/**
 * On a first start against the embedded database (testing only), load a small demo data set and issue
 * a credential pair for each active seller, returned so server.ts can print them once. Never with
 * DATABASE_URL (someone else's server) and never in production.
 */
export async function seedDemoIfEmpty (config: Config,
  database: Database): Promise<{ summary: SeedSummary, credentials: DemoCredentials[] } | null> {
  if (config.DATABASE_URL || config.ORDER_EXCHANGE_ENV !== 'testing' || !config.SEED_DEMO) return null
  if (!(await isEmpty(database.db))) return null
  return await loadDemo(config, database)
}

/**
 * The demo data and credentials themselves, on an empty database, unconditionally: what a first `npm start`
 * loads. test/helpers/doc-examples.ts loads it too, so the docs' examples run on the data a reader has.
 */
export async function loadDemo (config: Pick<Config, 'AUTO_REJECT_AFTER_MS'>,
  database: Database): Promise<{ summary: SeedSummary, credentials: DemoCredentials[] }> {
  const anchor = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000)
  const summary = await seed(database, { orders: 300, seed: 1, anchor, autoRejectAfterMs: config.AUTO_REJECT_AFTER_MS })
  const credentials: DemoCredentials[] = []
  for (const s of summary.sellers.filter((x) => x.status === 'active')) {
    const accessToken = await issueCredential(database.db, { sellerId: s.companyId, kind: 'access-token', environment: 'testing', label: 'demo' })
    const apiKey = await issueCredential(database.db, { sellerId: s.companyId, kind: 'api-key', environment: 'testing', label: 'demo' })
    credentials.push({ companyId: s.companyId, name: s.name, accessToken: accessToken.secret, apiKey: apiKey.secret })
  }
  return { summary, credentials }
}

export function formatDemoBanner (demo: { summary: SeedSummary, credentials: DemoCredentials[] }, baseUrl: string,
  explorer = false): string {
  const lines = [
    '',
    '=== Order Exchange Service: demo data loaded (testing environment) ===',
    ...demo.summary.sellers.map((s) => `  companyId ${s.companyId}: ${s.name} (${s.status}, ${s.pointsBalance} points, ${s.orderCount} orders)`),
    '',
    'Demo credentials (shown once; issue more with `npx order-exchange credentials issue`):'
  ]
  for (const c of demo.credentials) {
    lines.push(`  companyId ${c.companyId} ${c.name}`, `    access token (GraphQL):        ${c.accessToken}`, `    API key (status update, sync): ${c.apiKey}`)
  }
  const first = demo.credentials[0]
  if (first && explorer) {
    lines.push('', 'Open in a browser:',
      `  ${baseUrl}/docs       API reference: Authorize with the API key, then "Try it out" on the status update or the sync`,
      `  ${baseUrl}/graphiql   GraphiQL: put {"Authorization": "Bearer <access token>"} in Headers and run the orders query`)
  }
  if (first) {
    lines.push('', 'Try:',
      `  curl -s ${baseUrl}/health/ready`,
      `  curl -s ${baseUrl}/v2/graphql -H 'Authorization: Bearer ${first.accessToken}' -H 'Content-Type: application/json' \\`,
      '    -d \'{"query":"{ orders(input: {page: 1, limit: 2}) { pageInfo { total page hasNext limit } nodes { orderId orderNumber orderStatus orderTotalFinal } } }"}\'')
  }
  lines.push('')
  return lines.join('\n')
}
