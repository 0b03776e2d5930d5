import os from 'node:os'
import Fastify from 'fastify'
import { MAX_JSON_DEPTH, scanJson } from '../../src/http/json-body.js'
import jsonBodyPlugin from '../../src/plugins/json-body.js'
import { median } from '../lib/median.js'
import { numberKnob } from '../lib/knobs.js'

/*
 * What the depth bound and the exact-number scan (src/http/json-body.ts) cost the event loop, beside
 * JSON.parse of the same body (what every body paid before): the scan alone, and the whole
 * application/json parser as a request goes through it (app.inject on a route that answers at once),
 * with and without the bound. Bodies of about 0.8 MB: the finding's 400,000-level array, a flat array of
 * rows, and a platform catalogue-like body full of numbers (exactNumbers on). No database.
 * Knob: BENCH_ROUNDS (default 30) timings per figure; the table shows medians.
 */

const ROUNDS = numberKnob('BENCH_ROUNDS', 30, { integer: true, min: 1 })

const deep = '['.repeat(400_000) + ']'.repeat(400_000)
const graphqlDeep = `{"query":"{ __typename }","variables":{"x":${deep}}}`
const row = (i: number) => ({ retailerSyncId: `RET-${i}`, offerSyncId: `VAR-${i}`, shopSyncId: null, outstandingQuantity: '10.500', note: 'a [bracket] in "text"' })
const flat = JSON.stringify(Array.from({ length: 7_000 }, (_, i) => row(i)))
const offer = (i: number) => ({ id: i, purchasePrice: 80.1, mrpPriceAmount: 120, finalPriceWithTax: 105.25, currency: 'INR', priceRange: [{ minQuantity: 1, maxQuantity: 9, price: 105.25 }, { minQuantity: 10, maxQuantity: null, price: 99.5 }] })
const numbers = JSON.stringify(Array.from({ length: 430 }, (_, i) => ({ id: i + 1, companyId: 1, itemName: `Item ${i}`, skus: [{ id: i * 10, skuNickName: 'S', images: [], tags: [], itemSellingUnits: [], offers: [offer(i * 10), offer(i * 10 + 1), offer(i * 10 + 2)] }] })))

function time (work: () => unknown): number {
  const times: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const started = process.hrtime.bigint()
    work()
    times.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  return median(times)
}

async function timeAsync (work: () => Promise<unknown>): Promise<number> {
  const times: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const started = process.hrtime.bigint()
    await work()
    times.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  return median(times)
}

async function app (bounded: boolean) {
  const server = Fastify({ bodyLimit: 2 * 1024 * 1024, onProtoPoisoning: 'remove', onConstructorPoisoning: 'remove' })
  if (bounded) await server.register(jsonBodyPlugin)
  const answer = async () => ({ ok: true })
  server.post('/plain', answer)
  server.post('/exact', { config: { exactNumbers: true } }, answer)
  await server.ready()
  return server
}

const bodies: Array<[string, string, boolean]> = [
  ['400,000 levels of [', deep, false],
  ['GraphQL body, variables 400,000 deep', graphqlDeep, false],
  ['flat: 7,000 sync rows', flat, false],
  ['numbers: 430 catalogue items, exactNumbers', numbers, true]
]

const bounded = await app(true)
const unbounded = await app(false)
console.log(`json-body bench: ${os.cpus()[0]?.model ?? '?'} × ${os.cpus().length}, Node ${process.version}, ${ROUNDS} rounds, medians; bound ${MAX_JSON_DEPTH}`)
console.log('| body | bytes | scan ms | JSON.parse ms | request, bounded parser ms | answer | request, Fastify\'s parser ms | answer |')
console.log('|---|---:|---:|---:|---:|---|---:|---|')
for (const [name, body, exact] of bodies) {
  const scan = time(() => scanJson(body, { exactNumbers: exact }))
  const parse = time(() => JSON.parse(body))
  const url = exact ? '/exact' : '/plain'
  const send = (server: typeof bounded) => server.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: body })
  const withBound = await timeAsync(() => send(bounded))
  const without = await timeAsync(() => send(unbounded))
  const [a, b] = [await send(bounded), await send(unbounded)]
  const shown = (r: typeof a) => `${r.statusCode}${r.statusCode === 400 ? ` ${(r.json() as { code?: string }).code ?? ''}` : ''}`
  console.log(`| ${name} | ${Buffer.byteLength(body).toLocaleString('en')} | ${scan.toFixed(3)} | ${parse.toFixed(2)} | ${withBound.toFixed(2)} | ${shown(a)} | ${without.toFixed(2)} | ${shown(b)} |`)
}
await bounded.close()
await unbounded.close()
