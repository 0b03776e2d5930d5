// A real HTTP receiver that records every request and answers as told, slowly or never if asked.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

export interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  rawBody: string
  at: number
}

/**
 * Resolves after `ms`: for a fake server that answers slowly on purpose, its slowness being the subject (a stop
 * meeting attempts in flight, a sender's patience with a slow answer). Never a test's way to wait for a state.
 */
export async function slowly (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/** A `respond` for startReceiver that answers `status` after `ms`, as a real endpoint takes its time. */
export function answerAfter (ms: number, status = 200): () => Promise<number> {
  return async () => {
    await slowly(ms)
    return status
  }
}

/**
 * A real HTTP receiver on 127.0.0.1 that records every request. `respond` decides each answer (status,
 * or 'hang' to never answer); by default 200.
 */
export async function startReceiver (t: Test, respond: (req: Received, index: number) => number | 'hang' | Promise<number | 'hang'> = () => 200):
Promise<{ url: string, received: Received[], close: () => Promise<void> }> {
  const received: Received[] = []
  const hanging = new Set<http.ServerResponse>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      const index = received.push(r) - 1
      Promise.resolve(respond(r, index)).then((status) => {
        if (status === 'hang') { hanging.add(res); return }
        res.writeHead(status, { 'content-type': 'application/json' }).end(status < 300 ? '{"ok":true}' : '{"error":"nope"}')
      }, () => res.writeHead(500).end())
    })
  })
  server.keepAliveTimeout = 1000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    for (const res of hanging) res.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.teardown(close)
  return { url: `http://127.0.0.1:${port}`, received, close }
}
