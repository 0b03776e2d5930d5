import { Type, type Static } from '@sinclair/typebox'
import { payoutStatus, pointsEntryKind, refundStatus } from '../db/schema.js'
import { MAX_PLATFORM_ROWS } from '../platform/texts.js'
import { DEFAULT_MONEY_PAGE, MAX_MONEY_PAGE, MAX_SETTLE_ID, REFERENCE_MAX_LENGTH } from './texts.js'

/*
 * The finance routes' shapes (docs/platform/money.md) as TypeBox schemas for the REST contract: the lists'
 * query, rows and pages, and the settle rows. The routes check queries and rows themselves with the texts
 * of texts.ts (a schema error would refuse a whole batch for one bad row); these document them.
 */

const Money = Type.String({ pattern: '^-?[0-9]+\\.[0-9]{2}$', description: 'An exact decimal, two places ("1250.00")' })
const Instant = Type.String({ description: 'ISO-8601 in UTC with microseconds ("2026-11-28T10:15:02.481223Z")' })
const Id = Type.String({ pattern: '^[1-9][0-9]*$', description: 'A string of digits' })
const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()])

const time = (which: string) => Type.Optional(Type.String({
  description: `${which}: an ISO-8601 date and time with a time zone, or a date YYYY-MM-DD (midnight UTC), on the row's creation time`
}))
const common = {
  from: time('Inclusive'),
  to: time('Exclusive'),
  after: Type.Optional(Type.String({ description: 'The endCursor of the page before (opaque, per list)' })),
  limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$', description: `1 to ${MAX_MONEY_PAGE} (default ${DEFAULT_MONEY_PAGE})` }))
}
const companyId = Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,9}$', description: 'Only this seller\'s rows' }))
const statusOf = (values: readonly string[]) => Type.Optional(Type.Union(values.map((v) => Type.Literal(v))))

export const RefundListQuerySchema = Type.Object({ status: statusOf(refundStatus.enumValues), companyId, ...common },
  { additionalProperties: false, title: 'RefundListQuery' })
export const PayoutListQuerySchema = Type.Object({ status: statusOf(payoutStatus.enumValues), companyId, ...common },
  { additionalProperties: false, title: 'PayoutListQuery' })
export const LedgerListQuerySchema = Type.Object(common, { additionalProperties: false, title: 'LedgerListQuery' })
export const LedgerParamsSchema = Type.Object({
  companyId: Type.String({ pattern: '^[1-9][0-9]{0,9}$', description: `The seller (1 to ${MAX_SETTLE_ID})` })
}, { title: 'LedgerParams' })

export const RefundSchema = Type.Object({
  id: Id,
  orderId: Id,
  companyId: Type.Integer({ minimum: 1 }),
  amount: Money,
  currency: Type.String(),
  status: Type.Union(refundStatus.enumValues.map((v) => Type.Literal(v))),
  reference: Nullable(Type.String({ description: 'Finance\'s reference, once settled' })),
  createdAt: Instant,
  settledAt: Nullable(Instant)
}, { title: 'Refund' })

export const PayoutSchema = Type.Object({
  id: Id,
  orderId: Id,
  companyId: Type.Integer({ minimum: 1 }),
  amount: Money,
  currency: Type.String({ description: 'The order\'s currency' }),
  status: Type.Union(payoutStatus.enumValues.map((v) => Type.Literal(v))),
  scheduledFor: Nullable(Type.String({ description: 'YYYY-MM-DD' })),
  reference: Nullable(Type.String({ description: 'Finance\'s reference, once paid' })),
  paidAt: Nullable(Instant)
}, { title: 'Payout' })

export const LedgerEntrySchema = Type.Object({
  id: Id,
  kind: Type.Union(pointsEntryKind.enumValues.map((v) => Type.Literal(v))),
  amount: Money,
  balanceAfter: Money,
  orderId: Nullable(Id),
  reference: Nullable(Type.String()),
  createdAt: Instant
}, { title: 'LedgerEntry' })

const PageInfo = Type.Object({
  hasNext: Type.Boolean({ description: 'More rows follow now' }),
  endCursor: Nullable(Type.String({ description: 'Ask for after= this next; on an empty page the after you sent (null without one)' }))
}, { title: 'MoneyPageInfo' })

const pageOf = <T extends ReturnType<typeof Type.Object>>(node: T, title: string) =>
  Type.Object({ nodes: Type.Array(node), pageInfo: PageInfo }, { title })

export const RefundPageSchema = pageOf(RefundSchema, 'RefundPage')
export const PayoutPageSchema = pageOf(PayoutSchema, 'PayoutPage')
export const LedgerPageSchema = pageOf(LedgerEntrySchema, 'LedgerPage')
export type RefundPage = Static<typeof RefundPageSchema>
export type PayoutPage = Static<typeof PayoutPageSchema>
export type LedgerPage = Static<typeof LedgerPageSchema>

export const SettleRowSchema = Type.Object({
  id: Type.Union([Id, Type.Integer({ minimum: 1, maximum: MAX_SETTLE_ID })], { description: 'The refund\'s or payout\'s id' }),
  reference: Type.String({ minLength: 1, maxLength: REFERENCE_MAX_LENGTH, description: 'Finance\'s reference of the payment' }),
  settledAt: Type.Optional(Type.String({ description: 'When it was paid: ISO-8601 with a time zone, not in the future (default: now)' }))
}, { title: 'SettleRow' })
export type SettleRowInput = Static<typeof SettleRowSchema>

export const SettleRequestSchema = Type.Array(SettleRowSchema, {
  minItems: 1, maxItems: MAX_PLATFORM_ROWS, title: 'SettleRequest', description: '1 to 1,000 rows, each settled or refused on its own'
})
