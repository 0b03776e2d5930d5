import { TypeCompiler } from '@sinclair/typebox/compiler'
import { isPlainObject } from '../plain-object.js'
import { requestError, type ChangeRequest } from './plan-change.js'
import {
  OrderIdSchema, PlatformStatusUpdateItemSchema, PlatformTargetStatusSchema, StatusUpdateItemSchema, TargetStatusSchema
} from './schemas.js'
import type { ItemError } from '../item-error.js'
import { OrderErrors } from './texts.js'

/*
 * One item of the batch, validated on its own with TypeBox's compiled checkers: a bad item becomes a
 * per-order error and the rest of the batch goes on. The whole-item check is the fast path; the field
 * checks only run to name what is wrong.
 */

const orderIdCheck = TypeCompiler.Compile(OrderIdSchema)

/** Who asks: a seller may ask for its three statuses, the marketplace for its two, each nothing else. */
export type Requester = 'seller' | 'platform'
const CHECKS = {
  seller: { item: TypeCompiler.Compile(StatusUpdateItemSchema), status: TypeCompiler.Compile(TargetStatusSchema) },
  platform: {
    item: TypeCompiler.Compile(PlatformStatusUpdateItemSchema),
    status: TypeCompiler.Compile(PlatformTargetStatusSchema)
  }
}

export type ParsedItem =
  | { ok: true, request: ChangeRequest }
  | { ok: false, orderId: number | null, error: ItemError }

/** The order id of an item, or null when it has none usable (string ids beyond 2^53 are refused). */
function orderIdOf (item: Record<string, unknown>): number | null {
  if (!orderIdCheck.Check(item.Order_id)) return null
  const id = Number(item.Order_id)
  return Number.isSafeInteger(id) ? id : null
}

/**
 * Checks run in this order: item shape, Order_Status, Order_id, then the request rules (a rejection's
 * reason, storable text). The status comes before the id because a status that is not one of the three
 * makes the whole answer the invalid status's 400, whatever else is wrong with the item (its orderId is then null
 * when the id is unusable too). A reason that is not a string is ignored unless the item is a rejection,
 * where it counts as missing. Every check of an item runs here, once.
 */
export function parseItem (raw: unknown, requester: Requester = 'seller'): ParsedItem {
  if (!isPlainObject(raw)) return { ok: false, orderId: null, error: OrderErrors.itemNotObject }
  const checks = CHECKS[requester]
  const orderId = checks.item.Check(raw) ? Number(raw.Order_id) : orderIdOf(raw)
  if (!checks.status.Check(raw.Order_Status)) return { ok: false, orderId, error: OrderErrors.invalidStatus }
  if (orderId === null || !Number.isSafeInteger(orderId)) {
    return { ok: false, orderId: null, error: OrderErrors.badOrderId }
  }
  const request: ChangeRequest = { orderId, toStatus: raw.Order_Status, reason: typeof raw.reason === 'string' ? raw.reason : null }
  const invalid = requestError(request)
  return invalid ? { ok: false, orderId, error: invalid } : { ok: true, request }
}
