import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { build } from '../helpers/build.js'
import { createShop, post, reject } from '../helpers/status-update.js'
import { addJob } from '../helpers/jobs.js'
import { eventually } from '../helpers/eventually.js'
import { spawnWorker } from '../helpers/worker-process.js'
import { TASKS } from '../../src/effects/jobs.js'
import { WEBHOOK_ENDPOINTS_PATH } from '../../src/routes/webhook-endpoints.js'
import { scrubbedText } from '../../src/logger.js'

/*
 * What reaches a log line (docs/operate/security.md): a phone number, a secret and a statement's parameter value
 * planted in a failing job (graphile-worker writes the failed statement, parameters and all, into its own
 * message) and in a failing delivery (the deliverer's failed write carries the receiver's answer as a
 * parameter) never show in any line of a real worker process, at debug level.
 */

const PHONE = '+91 98765 43210'
const SECRET = 'whsec_cGxhbnRlZC1zZWNyZXQtZm9yLWxvZ3MtMDAwMQ=='
const PARAM = 'PLANTED-PARAM-7731'
const PLANTED = [PARAM, SECRET, PHONE, '9876543210', '98765 43210', 'cGxhbnRlZC1zZWNyZXQ']

t.test('a failing job and a failing delivery leave no parameter, secret or phone number in the worker\'s log', async (t) => {
  const { app, database } = await build(t, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
  // The retailer's numbers are the planted phone: the notifications of its order name it (masked).
  const shop = await createShop(database, {}, { whatsapp: PHONE, phone: PHONE })
  const [orderId] = await shop.orders(1, { paymentMode: 'CASH_ON_DELIVERY' })
  // The receiver answers 500 with the planted data, which the attempt log keeps (its owner's to read).
  const receiver = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end(`call ${PHONE}; ${SECRET}; ${PARAM}`))
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  const key = await shop.apiKey()
  const created = await app.inject({ method: 'POST', url: WEBHOOK_ENDPOINTS_PATH, headers: { authorization: `Bearer ${key}` }, payload: { url } })
  t.equal(created.statusCode, 201, created.body)

  // The attempt log's write fails (the deliverer's batch, whose parameters hold the answer); and a job fails
  // on a statement whose parameter holds the planted text (an auto-rejection of an order id that is no id).
  await database.sql.unsafe(`create function oxs_test_fail() returns trigger language plpgsql as $$
    begin raise exception 'planted failure'; end $$;
    create trigger oxs_test_fail before insert on delivery_attempts for each row execute function oxs_test_fail()`)
  await addJob(database.db, TASKS.autoReject, { orderId: `${PARAM} ${PHONE} ${SECRET}` }, { maxAttempts: 1 })

  const worker = await spawnWorker(t, {
    DATABASE_URL: database.url,
    LOG_LEVEL: 'debug',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WORKER_POLL_INTERVAL_MS: '100'
  })
  const res = await post(app, key, { order_status: [reject(orderId)] })
  t.equal(res.body.data?.successful, 1, 'the rejection is committed (its event goes to the endpoint)')

  const texts = (): string[] => worker.lines.map((l) => JSON.stringify(l))
  await eventually(t, 'the failed job logged', () => texts().some((l) => l.includes('Failed task')))
  await eventually(t, 'the notifications logged', () => worker.lines.filter((l) => String(l.msg).startsWith('notification: ')).length >= 3)
  t.ok(worker.lines.some((l) => String(l.to).endsWith('(+** ***** *3210)')), 'the retailer\'s number masked')
  await eventually(t, 'the failed delivery write logged', () => worker.lines.some((l) => l.msg === 'delivery attempts not recorded: they will be retried'))
  const failedJob = worker.lines.find((l) => String(l.msg).includes('Failed task'))!
  t.match(failedJob.msg, /Failed query/, 'the job\'s line still says what failed')
  t.match(failedJob.msg, /params: \[not logged\]/, 'and that its parameters were left out')
  const all = [...texts(), worker.stderr()].join('\n')
  for (const planted of PLANTED) t.notOk(all.includes(planted), `no line holds ${planted}`)
})

t.test('scrubbedText: parameters, secrets, URL queries and userinfo, phone numbers', async (t) => {
  const cases: Array<[string, string]> = [
    ["with error 'Failed query: insert\nparams: 8000188:ORDER_ACCEPTED:customer,8000188':\n    at run (x.js:1:1)", "with error 'Failed query: insert\nparams: [not logged]\n    at run (x.js:1:1)"],
    ['params: a,b', 'params: [not logged]'],
    ['connect ECONNREFUSED https://user:pw@example.com:8443/hook?token=SECRET#frag now', 'connect ECONNREFUSED https://example.com:8443/hook now'],
    ['http://u@host/p', 'http://host/p'],
    ['ring +91 98765 43210, 9876543210 or +1-415-555-2671', 'ring [phone], [phone] or [phone]'],
    ['key oxs_live_ak_abcdefghijkl_0123 and whsec_AAAA+/= and Bearer abc.def', 'key oxs_[secret] and whsec_[secret] and Bearer [secret]'],
    // What is not one of those stays: ids, times, decimals, paths.
    ['order 8000188 at 2026-11-28T10:00:00.123Z, 1.2345678901 and /v2/graphql', 'order 8000188 at 2026-11-28T10:00:00.123Z, 1.2345678901 and /v2/graphql']
  ]
  for (const [text, expected] of cases) t.equal(scrubbedText(text), expected, JSON.stringify(text))
})
