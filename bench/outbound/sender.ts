import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { createHttpSender, type SendOptions, type SendResult } from '../../src/outbound/http-sender.js'
import { median } from '../lib/median.js'
import { numberKnob } from '../lib/knobs.js'

/*
 * What one send through the HTTP sender (src/outbound/http-sender.ts, undici) costs: BENCH_REQUESTS POSTs
 * (default 5,000) of a webhook-sized body, BENCH_CONCURRENCY at a time (default 16), to a keep-alive
 * node:http server in a child process (so the server's CPU is not the sender's event loop), BENCH_ROUNDS
 * rounds (default 5), median requests a second.
 *
 * A/B against the node:http sender it replaced (commit 3906564): put that file beside this one and run again,
 *   git show 3906564:src/outbound/send-webhook.ts \
 *     | sed "s#'./address-policy.js'#'../../src/outbound/address-policy.js'#" > bench/outbound/old-sender.ts
 * and the rounds alternate between the two. Delete the copy afterwards: it is not part of the service.
 */

const REQUESTS = numberKnob('BENCH_REQUESTS', 5000, { integer: true, min: 1 })
const CONCURRENCY = numberKnob('BENCH_CONCURRENCY', 16, { integer: true, min: 1 })
const ROUNDS = numberKnob('BENCH_ROUNDS', 5, { integer: true, min: 1 })

interface Sender {
  send: (url: string, headers: Record<string, string>, body: string, options: SendOptions) => Promise<SendResult>
  close: () => void
}

const SERVER = `
const http = require('node:http')
let connections = 0
const server = http.createServer((req, res) => {
  if (req.url === '/connections') return res.end(String(connections))
  req.resume()
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'))
})
server.on('connection', () => connections++)
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
`

const body = JSON.stringify({ id: 'evt_7_42', type: 'order.accepted', data: { orderId: 42, note: 'x'.repeat(600) } })
const headers = { 'webhook-id': 'evt_7_42', 'webhook-timestamp': '1700000000', 'webhook-signature': `v1,${'A'.repeat(43)}=` }
const options: SendOptions = { allowPrivateNetworks: true, timeoutMs: 15_000, maxAnswerBytes: 64 * 1024 }

async function run (sender: Sender, url: string, requests: number): Promise<number> {
  let next = 0
  let failed = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < requests) {
      next++
      if (!(await sender.send(url, headers, body, options)).delivered) failed++
    }
  }))
  const seconds = (performance.now() - started) / 1000
  if (failed > 0) throw new Error(`${failed} of ${requests} sends failed`)
  return requests / seconds
}

const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] })
const port = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve))
const base = `http://127.0.0.1:${port}`
const connections = async (): Promise<number> => Number(await (await fetch(`${base}/connections`)).text())

const senders: Array<[string, () => Sender]> = [['undici (http-sender.ts)', createHttpSender]]
if (existsSync(new URL('./old-sender.ts', import.meta.url))) {
  const old = await import(new URL('./old-sender.ts', import.meta.url).href) as { createWebhookSender: () => Sender }
  senders.push(['node:http (old send-webhook.ts)', old.createWebhookSender])
}

const rates = new Map<string, number[]>(senders.map(([name]) => [name, []]))
const opened = new Map<string, number>()
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, make] of round % 2 === 0 ? senders : [...senders].reverse()) {
      const sender = make()
      await run(sender, `${base}/hook`, Math.min(500, REQUESTS)) // warm-up: connections, JIT
      const before = await connections()
      rates.get(name)!.push(await run(sender, `${base}/hook`, REQUESTS))
      opened.set(name, Math.max(opened.get(name) ?? 0, (await connections()) - before))
      sender.close()
    }
  }
} finally {
  child.kill()
}

console.log(`${REQUESTS} POSTs, ${CONCURRENCY} at a time, ${ROUNDS} rounds (median), Node ${process.version}`)
const first = median(rates.get(senders[0][0])!)
for (const [name] of senders) {
  const rate = median(rates.get(name)!)
  console.log(`${name.padEnd(32)} ${rate.toFixed(0).padStart(7)} req/s  ${(rate / first).toFixed(2)}×  ` +
    `new connections in a measured run: ${opened.get(name)}  (rounds: ${rates.get(name)!.map((r) => r.toFixed(0)).join(', ')})`)
}
if (senders.length === 2) {
  // Each round ran both, back to back: on a busy machine the ratio within a round is steadier than that of the medians.
  const [a, b] = senders.map(([name]) => rates.get(name)!)
  console.log(`old/new within a round, median: ${median(a.map((rate, i) => b[i] / rate)).toFixed(2)}×`)
}
