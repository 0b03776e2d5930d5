import { Type, type Static } from '@sinclair/typebox'
import { PLATFORM_TARGET_STATUSES, TARGET_STATUSES } from './state-machine.js'

/*
 * TypeBox schemas of the status update: the request, one item, and the answer's data. They validate the
 * items (status-item.ts) and describe the route (routes/status-update.ts wraps the data in the envelope).
 */

/** At most this many items per call (docs/api/limits.md); more is a 400 that names the limit. */
export const MAX_ITEMS = 1000

export const OrderIdSchema = Type.Union([
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  // The GraphQL endpoint hands orderId out as a string of digits; taking it back as given saves clients a conversion.
  Type.String({ pattern: '^[1-9][0-9]{0,15}$' })
], { description: 'Existing order ID: a positive integer (a string of digits is accepted too)' })

export const TargetStatusSchema = Type.Union(TARGET_STATUSES.map((s) => Type.Literal(s)), {
  description: 'The status to move the order to'
})

export const PlatformTargetStatusSchema = Type.Union(PLATFORM_TARGET_STATUSES.map((s) => Type.Literal(s)), {
  description: 'The status the marketplace moves the order to'
})

export const ReasonSchema = Type.Union([Type.String(), Type.Null()], {
  description: 'Required, non-blank, when Order_Status is ORDER_REJECTED_BY_SELLER'
})

export const StatusUpdateItemSchema = Type.Object({
  Order_id: OrderIdSchema,
  Order_Status: TargetStatusSchema,
  reason: Type.Optional(ReasonSchema)
}, { title: 'StatusUpdateItem', description: 'One order status update' })
export type StatusUpdateItem = Static<typeof StatusUpdateItemSchema>

export const PlatformStatusUpdateItemSchema = Type.Object({
  Order_id: OrderIdSchema,
  Order_Status: PlatformTargetStatusSchema,
  reason: Type.Optional(ReasonSchema)
}, { title: 'PlatformStatusUpdateItem', description: 'One order moved by the marketplace: CANCELLED or DELIVERED' })

export const OrderErrorSchema = Type.Object({
  // Additive to orderId: which item failed, so a client lines results up with what it sent
  // even when an order appears twice or an item has no usable id.
  index: Type.Integer({ minimum: 0, description: 'Position of the item in order_status, from 0' }),
  orderId: Type.Union([Type.Integer(), Type.Null()], { description: 'Null when the item carried no usable Order_id' }),
  error: Type.String({ description: 'The per-order error text (docs/api/status-updates.md lists them)' }),
  // Additive to the text: its code, for clients that branch on it (docs/api/errors.md).
  code: Type.String({ description: 'The machine-readable code of the error: ORDER_NOT_FOUND, INVALID_STATUS, REASON_REQUIRED, …' })
}, { title: 'OrderError' })
export type OrderError = Static<typeof OrderErrorSchema>

export const BatchDataSchema = Type.Object({
  successful: Type.Integer({ minimum: 0, description: 'Items whose order now has the asked status, changed by this call or already so' }),
  failed: Type.Integer({ minimum: 0, description: 'Items listed in errors' }),
  errors: Type.Array(OrderErrorSchema, { description: 'One per failed item, in item order' }),
  // Additive: lets a retrying client tell a change it made from one already made.
  unchangedOrderIds: Type.Array(Type.Integer(), {
    description: 'Orders of successful items that already had the asked status: nothing was done for them (no second deduction, refund or notification). In item order.'
  })
}, { title: 'StatusUpdateData' })
export type BatchData = Static<typeof BatchDataSchema>
