import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { AbortError, createClient, type PaceClock, type PaceWait, type QueryCost } from '@order-exchange/client'
import { credential } from '../helpers/fixtures.js'
import { serve } from '../helpers/client.js'

/*
 * The client paces its GraphQL reads from extensions.cost. Most of these run against a stub GraphQL server
 * made here, which answers with a cost report the test chooses (or keeps a real token bucket of its own),
 * since what is tested is the client's behaviour; the last runs against the service with a small budget.
 * Waits are either on a fake clock (asserted exactly: they are computed) or real and short, asserted as
 * lower bounds and orderings only.
 */

interface Seen { at: number, page: number, status: number }
type Answer = { status: number, headers?: Record<string, string>, cost?: QueryCost | null }

/** A GraphQL server answering `orders` pages 1..pages; `answer` decides each answer's status and cost. */
async function stub (
  t: Test, pages: number, answer: (index: number, page: number) => Answer
): Promise<{ url: string, seen: Seen[] }> {
  const seen: Seen[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const { variables } = JSON.parse(Buffer.concat(chunks).toString()) as { variables: { input: { page: number } } }
      const page = variables.input.page
      const { status, headers = {}, cost } = answer(seen.length, page)
      seen.push({ at: Date.now(), page, status })
      const extensions = cost ? { extensions: { cost } } : {}
      const body = status === 200
        ? { data: { orders: { pageInfo: { page, hasNext: page < pages, total: pages }, nodes: [] } }, ...extensions }
        : { data: null, errors: [{ message: 'Rate limit exceeded', extensions: { code: 'RATE_LIMITED' } }], ...extensions }
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const report = (requested: number, available: number, max = 1000, rate = 100): QueryCost => ({
  requestedQueryCost: requested,
  actualQueryCost: requested,
  throttleStatus: { maximumAvailable: max, currentlyAvailable: available, restoreRate: rate }
})

/** A clock that never really waits: sleeping moves its time on. */
function fakeClock (): PaceClock & { sleeps: number[], time: () => number } {
  let now = 1_000_000
  const sleeps: number[] = []
  return {
    now: () => now,
    sleep: async (ms) => { sleeps.push(ms); now += ms },
    sleeps,
    time: () => now
  }
}

async function walk (client: ReturnType<typeof createClient>, limit = 10): Promise<number[]> {
  const pages: number[] = []
  for await (const page of client.orders.pages({ limit })) pages.push(page.pageInfo.page)
  return pages
}

t.test('a low currentlyAvailable: the next read waits (requested − estimate) / restoreRate first', async (t) => {
  // Each page asks 600 of a bucket of 1,000 that refills at 100 a second; the stub reports 100 left.
  const server = await stub(t, 3, () => ({ status: 200, cost: report(600, 100) }))
  const clock = fakeClock()
  const waits: PaceWait[] = []
  const client = createClient({ baseUrl: server.url, accessToken: 't', pace: { clock, onWait: (w) => waits.push(w) } })
  t.same(await walk(client), [1, 2, 3])
  t.equal(waits.length, 2, 'page 1: nothing known yet; pages 2 and 3 wait')
  for (const wait of waits) {
    t.match(wait, { expectedCost: 600, estimate: 100 }, 'no time passed on the fake clock: the bucket as reported')
    t.ok(wait.waitMs >= 5000 && wait.waitMs < 5100, `waited ${wait.waitMs} ms for (600 − 100) / 100 = 5 s`)
  }
  t.same(clock.sleeps, waits.map((w) => w.waitMs), 'the waits were slept on the client\'s clock')
  t.same(server.seen.map((s) => s.status), [200, 200, 200])
})

t.test('time since the report counts: a bucket refilled since needs no wait', async (t) => {
  const server = await stub(t, 2, () => ({ status: 200, cost: report(600, 100) }))
  const clock = fakeClock()
  const client = createClient({ baseUrl: server.url, accessToken: 't', pace: { clock } })
  for await (const page of client.orders.pages({ limit: 10 })) {
    // The caller works on page 1 for 6 s (fake): 100 + 6 × 100 = 700 ≥ 600.
    if (page.pageInfo.page === 1) await clock.sleep(6000)
  }
  t.same(clock.sleeps, [6000], 'only the caller\'s own sleep: the client did not wait')
  t.equal(server.seen.length, 2)
})

t.test('against a real bucket: the client slows down and is never refused; unpaced it is refused', async (t) => {
  // The stub keeps a token bucket as the service does: 1,000 points, 4,000 back a second, 800 a page.
  const bucket = (): ((index: number, page: number) => Answer) => {
    let available = 1000
    let at = Date.now()
    return () => {
      const now = Date.now()
      available = Math.min(1000, available + (now - at) * 4)
      at = now
      if (available < 800) {
        const retryAfter = ((800 - available) / 4000).toFixed(3) // seconds (fractional, to keep the test short)
        return { status: 429, headers: { 'retry-after': retryAfter }, cost: report(800, Math.floor(available), 1000, 4000) }
      }
      available -= 800
      return { status: 200, cost: report(800, Math.floor(available), 1000, 4000) }
    }
  }
  const paced = await stub(t, 4, bucket())
  const waits: PaceWait[] = []
  const client = createClient({ baseUrl: paced.url, accessToken: 't', pace: { onWait: (w) => waits.push(w) } })
  t.same(await walk(client), [1, 2, 3, 4])
  t.same(paced.seen.map((s) => s.status), [200, 200, 200, 200], 'no 429: the client waited for the bucket')
  // Page 1 leaves 200, a paced page about 0: the next waits up to (800 − 200) / 4,000 s = 150 ms, then up to
  // 200 ms, less the time since the report (on a loaded machine that may cover it: no exact count asserted).
  t.ok(waits.length >= 1, `waited ${waits.map((w) => w.waitMs).join(', ')} ms`)
  t.ok(waits.every((w) => w.waitMs <= 210), 'never more than (800 − 0) / 4,000 s (and a few ms of margin)')
  t.ok(waits.every((w) => w.expectedCost === 800 && w.estimate >= 0), 'the page\'s cost, the reported bucket')
  const span = paced.seen.at(-1)!.at - paced.seen[0]!.at
  t.ok(span >= 540, `4 pages of 800 from 1,000 need 2,200 points refilled (550 ms): took ${span} ms`)

  const unpaced = await stub(t, 4, bucket())
  const eager = createClient({ baseUrl: unpaced.url, accessToken: 't', pace: false, retry: { baseDelayMs: 10 } })
  t.same(await walk(eager), [1, 2, 3, 4], 'pace: false still gets there, through 429 and Retry-After')
  t.ok(unpaced.seen.some((s) => s.status === 429), `unpaced: ${unpaced.seen.map((s) => s.status).join(' ')}`)
})

t.test('without extensions.cost nothing waits', async (t) => {
  const server = await stub(t, 4, () => ({ status: 200 }))
  const clock = fakeClock()
  const waits: PaceWait[] = []
  const client = createClient({ baseUrl: server.url, accessToken: 't', pace: { clock, onWait: (w) => waits.push(w) } })
  t.same(await walk(client), [1, 2, 3, 4])
  t.same(clock.sleeps, [], 'no sleep')
  t.same(waits, [])

  // A report of another shape (no throttleStatus) is not one.
  const odd = await stub(t, 3, () => ({ status: 200, cost: { requestedQueryCost: 600 } as unknown as QueryCost }))
  const other = createClient({ baseUrl: odd.url, accessToken: 't', pace: { clock } })
  t.same(await walk(other), [1, 2, 3])
  t.same(clock.sleeps, [])
})

t.test('a 429 with Retry-After is still retried, and waited in full', async (t) => {
  // The bucket looks full to the client, but another process on the credential spent it.
  const plan: Answer[] = [
    { status: 200, cost: report(600, 1000, 1000, 100_000) },
    { status: 429, headers: { 'retry-after': '1' }, cost: report(600, 0, 1000, 100_000) },
    { status: 200, cost: report(600, 400, 1000, 100_000) }
  ]
  const server = await stub(t, 2, (i) => plan[i]!)
  const waits: PaceWait[] = []
  const client = createClient({
    baseUrl: server.url, accessToken: 't', retry: { baseDelayMs: 10 }, pace: { onWait: (w) => waits.push(w) }
  })
  t.same(await walk(client), [1, 2])
  t.same(server.seen.map((s) => [s.page, s.status]), [[1, 200], [2, 429], [2, 200]])
  t.same(waits, [], 'nothing to wait for by the reports')
  const gap = server.seen[2]!.at - server.seen[1]!.at
  t.ok(gap >= 950, `the retry came ${gap} ms after the 429 (Retry-After: 1)`)
})

t.test('a read aborted while it waits ends at once with an AbortError', async (t) => {
  // Reports that ask for a 10 s wait before page 2, on the real clock.
  const server = await stub(t, 2, () => ({ status: 200, cost: report(1000, 0, 1000, 100) }))
  const controller = new AbortController()
  // Aborted once the wait has begun: onWait is told just before the client sleeps, the abort comes a turn later.
  const client = createClient({ baseUrl: server.url, accessToken: 't', pace: { onWait: () => { queueMicrotask(() => controller.abort()) } } })
  const started = Date.now()
  const pages: number[] = []
  const walking = (async () => {
    for await (const page of client.orders.pages({ limit: 10 }, { signal: controller.signal })) {
      pages.push(page.pageInfo.page)
    }
  })()
  await t.rejects(walking, AbortError)
  t.same(pages, [1])
  t.equal(server.seen.length, 1, 'page 2 was never sent')
  t.ok(Date.now() - started < 5000, 'at once, not after the wait')
})

t.test('pace: false: no wait, whatever the report says', async (t) => {
  // A report that would make a paced client wait 10 s before each page.
  const server = await stub(t, 3, () => ({ status: 200, cost: report(1000, 0, 1000, 100) }))
  const started = Date.now()
  const client = createClient({ baseUrl: server.url, accessToken: 't', pace: false })
  t.same(await walk(client), [1, 2, 3])
  t.ok(Date.now() - started < 5000, `done in ${Date.now() - started} ms, not 20 s`)

  const clock = fakeClock()
  const paced = createClient({ baseUrl: server.url, accessToken: 't', pace: { clock } })
  t.same(await walk(paced), [1, 2, 3])
  t.equal(clock.sleeps.length, 2, 'the same answers make a paced client wait')
})

t.test('the expected cost is per document and page size', async (t) => {
  const server = await stub(t, 1, () => ({ status: 200, cost: report(600, 100) }))
  const clock = fakeClock()
  const client = createClient({ baseUrl: server.url, accessToken: 't', pace: { clock } })
  await walk(client, 10)
  await walk(client, 50)
  t.same(clock.sleeps, [], 'a page size not read before has no known cost: no wait')
  await walk(client, 10)
  t.equal(clock.sleeps.length, 1, 'the same page size again: its last cost is known')
})

t.test('concurrent reads of one client queue behind each other', async (t) => {
  const server = await stub(t, 1, () => ({ status: 200, cost: report(600, 400, 1000, 100) }))
  const clock = fakeClock()
  const waits: PaceWait[] = []
  // A clock whose sleeps all start now (as real timers would), for reads admitted together.
  const together: PaceClock = { now: clock.now, sleep: async (ms) => { clock.sleeps.push(ms) } }
  const client = createClient({ baseUrl: server.url, accessToken: 't', pace: { clock: together, onWait: (w) => waits.push(w) } })
  await walk(client)
  await Promise.all([walk(client), walk(client), walk(client)])
  t.equal(waits.length, 3)
  const ms = waits.map((w) => w.waitMs)
  // 400 available: the first waits for 200 more (2 s), the next for its own 600 after that (6 s more), …
  t.ok(ms[0]! >= 2000 && ms[0]! < 2100, `first ${ms[0]} ms`)
  t.ok(ms[1]! - ms[0]! >= 6000, `second ${ms[1]} ms: after the first's 600 points`)
  t.ok(ms[2]! - ms[1]! >= 6000, `third ${ms[2]} ms: after the second's`)
  t.same(server.seen.map((s) => s.status), [200, 200, 200, 200])
})

t.test('the service\'s own budget: a paced walk is never refused, an unpaced one is', async (t) => {
  // 100,000 points refilled at 20,000 a second: a full page of 100 asks about 85,000 and is billed less.
  const served = await serve(t, {
    orders: 450,
    env: { RATE_LIMIT_ENABLED: 'true', GRAPHQL_COST_BUCKET: '100000', GRAPHQL_COST_RESTORE_PER_SECOND: '20000' }
  })
  const recording = (statuses: number[]): typeof fetch => async (input, init) => {
    const response = await fetch(input, init)
    statuses.push(response.status)
    return response
  }
  const statuses: number[] = []
  const waits: PaceWait[] = []
  const client = createClient({
    baseUrl: served.baseUrl,
    accessToken: served.accessToken,
    fetch: recording(statuses),
    pace: { onWait: (w) => waits.push(w) }
  })
  const pages = []
  for await (const page of client.orders.pages({ limit: 100 })) pages.push(page)
  t.ok(pages.length >= 3, `${pages.length} pages`)
  t.same(statuses, pages.map(() => 200), 'every page answered at the first attempt')
  t.ok(waits.length >= 1, `the client waited before ${waits.length} of them (${waits.map((w) => w.waitMs).join(', ')} ms)`)

  // Another credential of the same seller (a bucket of its own), not paced: refused, then retried.
  const unpacedStatuses: number[] = []
  const eager = createClient({
    baseUrl: served.baseUrl,
    accessToken: await credential(served.database, 1, 'access-token'),
    fetch: recording(unpacedStatuses),
    pace: false
  })
  const again = []
  for await (const page of eager.orders.pages({ limit: 100 })) again.push(page)
  t.equal(again.length, pages.length)
  t.ok(unpacedStatuses.includes(429), `unpaced: ${unpacedStatuses.join(' ')}`)
})
