// The client package against the real service on a real port, and a fault proxy in front of it.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { build, type TestContext } from './build.js'
import { credential, seedDemo } from './fixtures.js'

/*
 * The client package (@order-exchange/client, built by `npm run build:client` before the tests) against the
 * real service: the whole app on a fresh database, listening on a real port.
 */

export interface Served extends TestContext {
  baseUrl: string
  /** Seller 1's credentials. */
  accessToken: string
  apiKey: string
}

/** The app with the demo sellers and `orders` demo orders (0: sellers only). */
export async function serve (
  t: Test,
  options: { orders?: number, env?: Record<string, string> } = {}
): Promise<Served> {
  const context = await build(t, options.env ?? {})
  await seedDemo(context.database, options.orders ?? 120)
  await context.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = context.app.server.address() as AddressInfo
  return {
    ...context,
    baseUrl: `http://127.0.0.1:${port}`,
    accessToken: await credential(context.database, 1, 'access-token'),
    apiKey: await credential(context.database, 1, 'api-key')
  }
}

/** Seller 1's live orders in the service's order, with when each last changed (as the API writes it). */
export async function liveOrders (context: TestContext): Promise<Array<{ id: string, updatedAt: string }>> {
  const rows = await context.database.sql`select id::text, to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as updated_at
    from orders where seller_id = 1 and not is_deleted order by created_at, id`
  return rows.map((r) => ({ id: r.id as string, updatedAt: r.updated_at as string }))
}

/**
 * What a fault proxy does with one request: pass it on; drop the connection before passing it on; pass it
 * on and drop the connection instead of answering (the work is done, the answer lost); pass on a body
 * cut short (not JSON any more); never answer; or answer with a status (and optional headers and body) itself.
 */
export type ProxyAction = 'pass' | 'drop' | 'hang' | 'lose-answer' | 'mangle' | { status: number, headers?: Record<string, string>, body?: string }

/** One request the fault proxy received, and what it did with it. */
export interface ProxiedRequest {
  method: string
  path: string
  action: ProxyAction
  at: number
  idempotencyKey?: string
}

/**
 * A real HTTP proxy in front of the service whose `plan` decides what happens to each request, in order:
 * the way a load balancer that restarts, a flaky network or a gateway answering 503 look to a client.
 */
export async function faultProxy (
  t: Test,
  target: string,
  plan: (index: number, req: http.IncomingMessage) => ProxyAction
): Promise<{ url: string, requests: ProxiedRequest[] }> {
  const requests: ProxiedRequest[] = []
  const upstream = new URL(target)
  const server = http.createServer((req, res) => {
    const action = plan(requests.length, req)
    const idempotencyKey = req.headers['idempotency-key']
    requests.push({ method: req.method ?? '', path: req.url ?? '', action, at: Date.now(), ...(typeof idempotencyKey === 'string' ? { idempotencyKey } : {}) })
    if (action === 'drop') {
      req.resume()
      req.socket.destroy()
      return
    }
    if (action === 'hang') {
      req.resume()
      return
    }
    if (typeof action === 'object') {
      req.resume()
      req.on('end', () => res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers }).end(action.body ?? '{"message":"injected"}'))
      return
    }
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let body = Buffer.concat(chunks)
      if (action === 'mangle') body = body.subarray(0, Math.max(1, Math.floor(body.length / 2)))
      const headers = { ...req.headers, 'content-length': String(body.length) }
      const options = { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }
      const forward = http.request(options, (answer) => {
        if (action === 'lose-answer') {
          answer.resume()
          answer.on('end', () => req.socket.destroy())
          return
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      forward.on('error', () => res.destroy())
      forward.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}
