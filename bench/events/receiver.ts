import http from 'node:http'
import type { AddressInfo } from 'node:net'

/*
 * The sellers' webhook receiver for bench:events' webhooks part (webhooks.ts), in its own process so that
 * receiving does not share the deliverer's event loop: a node:http server on 127.0.0.1 (keep-alive, node's
 * default 5 s idle timeout, above the sender's 4 s) that reads each request to its end and answers
 * 200 {"ok":true} at once. For every request it notes when it had the whole body, minus the event's
 * `timestamp` (clock_timestamp() in the recording statement, the last before commit): commit-to-delivery,
 * on the one machine clock the database shares.
 *
 * Tells the parent its port; answers 'take' with { taken: { hits, bytes, connections, latencies } } (requests,
 * body bytes and connections accepted since start, latencies in ms since the previous take) and exits on
 * 'stop'.
 */

let hits = 0
let connections = 0
let bytes = 0
let latencies: number[] = []
const MARK = '"timestamp":"'

/** Epoch ms with µs of `YYYY-MM-DDTHH:MM:SS.ffffffZ` (Date.parse drops the last three digits). */
function epochMs (iso: string): number {
  const whole = Date.parse(`${iso.slice(0, 19)}Z`)
  const fraction = /^\.(\d+)Z$/.exec(iso.slice(19))?.[1] ?? '0'
  return whole + Number(`0.${fraction}`) * 1000
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    const now = performance.timeOrigin + performance.now()
    const body = Buffer.concat(chunks).toString('utf8')
    hits++
    bytes += body.length
    // The event's own timestamp comes before `data` (event-body.ts), so the first one in the body is it.
    const at = body.indexOf(MARK)
    if (at >= 0) latencies.push(now - epochMs(body.slice(at + MARK.length, body.indexOf('"', at + MARK.length))))
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
  })
})

// Keep-alive at work: the sender's connections are reused, so this stays near its concurrency.
server.on('connection', () => { connections++ })
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }))

process.on('message', (message) => {
  if (message === 'take') {
    process.send!({ taken: { hits, bytes, connections, latencies } })
    latencies = []
  } else if (message === 'stop') {
    server.closeAllConnections()
    server.close(() => process.exit(0))
  }
})
