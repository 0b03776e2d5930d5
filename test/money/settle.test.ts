import t from 'tap'
import { setupMoney } from '../helpers/money.js'
import { PLATFORM_PAYOUTS_SETTLE_PATH, PLATFORM_REFUNDS_SETTLE_PATH } from '../../src/routes/rest-contract.js'
import { SettleRowErrors as E } from '../../src/money/texts.js'

/*
 * POST /v2/platform/refunds/settle and /v2/platform/payouts/settle (docs/platform/money.md): MANUAL →
 * SUCCEEDED and SCHEDULED → PAID with the reference and time, the same row again unchanged, another
 * reference or a row in another state or an unknown id refused by row with nothing changed, two clerks
 * at once settling each row exactly once, the Idempotency-Key replayed, seller credentials refused.
 */

const refusal = (index: number, id: string | null, e: { code: string, text: string }) =>
  ({ index, id, error: e.text, code: e.code })

t.test('refunds: settled, unchanged, conflict, wrong state, unknown, duplicate, bad rows', async (t) => {
  const { post, refund, database } = await setupMoney(t)
  const manual = await refund(0)
  const manual2 = await refund(1)
  const pending = await refund(2, 'PENDING')
  const first = await post(PLATFORM_REFUNDS_SETTLE_PATH, [
    { id: manual, reference: 'UTR-1', settledAt: '2026-11-28T10:15:00+05:30' },
    { id: Number(manual2), reference: 'UTR-2' },
    { id: pending, reference: 'UTR-3' },
    { id: '999999', reference: 'UTR-4' },
    { id: manual, reference: 'UTR-1' },
    { id: 'abc', reference: 'UTR-5' },
    { id: manual2, reference: '' },
    'not a row'
  ])
  t.equal(first.statusCode, 200)
  t.same(first.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: 'Refunds settled',
    data: {
      received: 8,
      inserted: 0,
      updated: 2,
      unchanged: 0,
      failed: 6,
      errors: [
        refusal(2, pending, E.refundNotManual(pending, 'PENDING')),
        refusal(3, '999999', E.refundNotFound('999999')),
        refusal(4, manual, E.idTwice(manual, 0)),
        refusal(5, 'abc', E.id),
        refusal(6, manual2, E.idTwice(manual2, 1)),
        refusal(7, null, E.notAnObject)
      ]
    }
  })
  const rows = await database.sql`select id::text, status, reference, settled_at = '2026-11-28T04:45:00Z' as exact,
    settled_at is not null as settled from refunds order by id`
  t.same(rows.map((r) => [r.id, r.status, r.reference, r.settled]), [
    [manual, 'SUCCEEDED', 'UTR-1', true], [manual2, 'SUCCEEDED', 'UTR-2', true], [pending, 'PENDING', null, false]
  ])
  t.ok(rows[0].exact, 'settledAt stored as the instant given')

  const before = await database.sql`select id, updated_at::text from refunds order by id`
  const again = await post(PLATFORM_REFUNDS_SETTLE_PATH, [
    { id: manual, reference: 'UTR-1' }, { id: manual2, reference: 'UTR-OTHER' }
  ])
  t.same(again.json().data, {
    received: 2,
    inserted: 0,
    updated: 0,
    unchanged: 1,
    failed: 1,
    errors: [refusal(1, manual2, E.alreadySettled(`Refund ${manual2}`, 'UTR-2'))]
  })
  t.same(await database.sql`select id, updated_at::text from refunds order by id`, before, 'nothing written')
})

t.test('a settledAt in the future or without a time zone is refused', async (t) => {
  const { post, refund } = await setupMoney(t)
  const id = await refund(0)
  const res = await post(PLATFORM_REFUNDS_SETTLE_PATH, [
    { id, reference: 'R', settledAt: '2999-01-01T00:00:00Z' },
    { id: id === '1' ? '2' : '1', reference: 'R', settledAt: '2026-11-28T10:15:00' }
  ])
  t.same(res.json().data.errors.map((e: { code: string }) => e.code), ['INVALID_SETTLED_AT', 'INVALID_SETTLED_AT'])
})

t.test('payouts: SCHEDULED → PAID, ON_HOLD refused', async (t) => {
  const { post, payout, database } = await setupMoney(t)
  const scheduled = await payout(0)
  const held = await payout(1, 'ON_HOLD')
  const res = await post(PLATFORM_PAYOUTS_SETTLE_PATH, [{ id: scheduled, reference: 'NEFT-1' }, { id: held, reference: 'NEFT-2' }])
  t.same(res.json().data, {
    received: 2,
    inserted: 0,
    updated: 1,
    unchanged: 0,
    failed: 1,
    errors: [refusal(1, held, E.payoutNotScheduled(held, 'ON_HOLD'))]
  })
  t.same(await database.sql`select status, reference, paid_at is not null as paid from payout_schedules order by id`, [
    { status: 'PAID', reference: 'NEFT-1', paid: true }, { status: 'ON_HOLD', reference: null, paid: false }
  ])
})

t.test('two clerks settling the same rows at once: each row settles exactly once', async (t) => {
  const { post, refund, database } = await setupMoney(t)
  const ids: string[] = []
  for (let i = 0; i < 40; i++) ids.push(await refund(i))
  // Opposite orders, overlapping: the locks are taken in id order, so neither waits for the other forever.
  const a = ids.map((id) => ({ id, reference: `A-${id}` }))
  const b = [...ids].reverse().map((id) => ({ id, reference: `B-${id}` }))
  const [ra, rb] = await Promise.all([post(PLATFORM_REFUNDS_SETTLE_PATH, a), post(PLATFORM_REFUNDS_SETTLE_PATH, b)])
  t.equal(ra.statusCode, 200)
  t.equal(rb.statusCode, 200)
  const [da, db] = [ra.json().data, rb.json().data]
  t.equal(da.updated + db.updated, 40, 'every row settled by one of them')
  t.equal(da.failed + db.failed, 40, 'and refused to the other, as another reference')
  t.ok([...da.errors, ...db.errors].every((e: { code: string }) => e.code === 'ALREADY_SETTLED'))
  const stored = await database.sql`select reference from refunds where status = 'SUCCEEDED'`
  t.equal(stored.length, 40)
})

t.test('Idempotency-Key: the answer replayed, nothing settled twice', async (t) => {
  const { post, refund } = await setupMoney(t)
  const id = await refund(0)
  const headers = { 'idempotency-key': 'settle-1' }
  const first = await post(PLATFORM_REFUNDS_SETTLE_PATH, [{ id, reference: 'UTR-9' }], headers)
  const again = await post(PLATFORM_REFUNDS_SETTLE_PATH, [{ id, reference: 'UTR-9' }], headers)
  t.equal(first.json().data.updated, 1)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.body, first.body)
  const other = await post(PLATFORM_REFUNDS_SETTLE_PATH, [{ id, reference: 'UTR-10' }], headers)
  t.equal(other.statusCode, 422, 'the key with another body')
})

t.test('request-level refusals and credentials', async (t) => {
  const { post, sellerKey, refund, database } = await setupMoney(t)
  const id = await refund(0)
  t.equal((await post(PLATFORM_REFUNDS_SETTLE_PATH, [])).json().code, 'NOT_AN_ARRAY')
  t.equal((await post(PLATFORM_REFUNDS_SETTLE_PATH, { id })).statusCode, 400)
  const many = Array.from({ length: 1001 }, (_, i) => ({ id: String(i + 1), reference: 'R' }))
  t.equal((await post(PLATFORM_PAYOUTS_SETTLE_PATH, many)).json().code, 'TOO_MANY_ROWS')
  for (const path of [PLATFORM_REFUNDS_SETTLE_PATH, PLATFORM_PAYOUTS_SETTLE_PATH]) {
    const asSeller = await post(path, [{ id, reference: 'R' }], { authorization: `Bearer ${sellerKey}` })
    t.equal(asSeller.statusCode, 401, `${path}: a seller's key is not the platform key`)
    const noKey = await post(path, [{ id, reference: 'R' }], { authorization: '' })
    t.equal(noKey.statusCode, 401)
  }
  t.same(await database.sql`select status from refunds`, [{ status: 'MANUAL' }], 'nothing settled')
})
