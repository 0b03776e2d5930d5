import { TypeCompiler } from '@sinclair/typebox/compiler'
import { OrderErrorText } from '../errors.js'
import type { ChangeRequest } from './plan-change.js'
import { OrderIdSchema, StatusUpdateItemSchema, TargetStatusSchema } from './schemas.js'

/*
 * One item of the batch, validated on its own with TypeBox's compiled checkers: a bad item becomes a
 * per-order error and the rest of the batch goes on. The whole-item check is the fast path; the field
 * checks only run to name what is wrong.
 */

const itemCheck = TypeCompiler.Compile(StatusUpdateItemSchema)
const orderIdCheck = TypeCompiler.Compile(OrderIdSchema)
const statusCheck = TypeCompiler.Compile(TargetStatusSchema)

export type ParsedItem =
  | { ok: true, request: ChangeRequest }
  | { ok: false, orderId: number | null, error: string }

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The order id of an item, or null when it has none usable (string ids beyond 2^53 are refused). */
function orderIdOf (item: Record<string, unknown>): number | null {
  if (!orderIdCheck.Check(item.Order_id)) return null
  const id = Number(item.Order_id)
  return Number.isSafeInteger(id) ? id : null
}

/**
 * Checks run in this order: item shape, Order_id, Order_Status; the reason of a rejection is checked
 * with the other request rules (plan-change.ts). A reason that is not a string is ignored unless the
 * item is a rejection, where it counts as missing.
 */
export function parseItem (raw: unknown): ParsedItem {
  if (!isRecord(raw)) return { ok: false, orderId: null, error: OrderErrorText.itemNotObject }
  const orderId = itemCheck.Check(raw) ? Number(raw.Order_id) : orderIdOf(raw)
  if (orderId === null || !Number.isSafeInteger(orderId)) return { ok: false, orderId: null, error: OrderErrorText.badOrderId }
  if (!statusCheck.Check(raw.Order_Status)) return { ok: false, orderId, error: OrderErrorText.invalidStatus }
  const reason = typeof raw.reason === 'string' ? raw.reason : null
  return { ok: true, request: { orderId, toStatus: raw.Order_Status, reason } }
}
