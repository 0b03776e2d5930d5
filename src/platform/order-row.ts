import type { PaymentMode } from '../db/schema.js'
import type { ItemError } from '../item-error.js'
import type { PlacedOrder } from '../status-update/apply-placements.js'
import { isPlainObject } from '../plain-object.js'
import { refused, type CheckedRow, type RowOutcome } from './batch.js'
import { decimalValue, idValue, textValue } from './fields.js'
import { MAX_MONEY, MAX_ORDER_ID, MAX_ORDER_LINES, MAX_QUANTITY, OrderRowErrors as O } from './order-texts.js'
import { combined, PlatformRowErrors as E } from './texts.js'

/*
 * An order row of POST /v2/platform/orders checked on its own, then against the other rows of the same
 * request (an orderId, an orderNumber or a line id twice), before anything is read or written. Pure.
 * Every field is required but shopId (null or absent: no shop) and a line's dealId (null or absent).
 */

export interface OrderLine {
  id: number
  offerId: number
  /** Canonical decimal text ("2.5"). */
  quantity: string
  dealId: number | null
}

type OrderAmounts = Pick<PlacedOrder, 'orderTotal' | 'orderTotalFinal' | 'orderTaxAmount' | 'orderCessAmount' |
  'appliedPoints' | 'totalExtraCharges' | 'roundOff'>

/** The order as checked: amounts as canonical decimal texts (decimalValue), placedAt as sent. */
export interface OrderRow extends PlacedOrder {
  /** The instant in microseconds since the epoch: how a re-send is compared with what is stored. */
  placedAtMicros: bigint
  /** The calendar day of placedAt in its own offset: the day a deal must be of. */
  placedOn: string
  orderItems: OrderLine[]
}

const PAYMENT_MODES: readonly PaymentMode[] = ['ONLINE_PAID', 'PREPAID', 'CASH_ON_DELIVERY']
const AMOUNTS: ReadonlyArray<[keyof OrderAmounts, boolean]> = [
  ['orderTotal', false], ['orderTotalFinal', false], ['orderTaxAmount', false], ['orderCessAmount', false],
  ['appliedPoints', false], ['totalExtraCharges', false], ['roundOff', true]
]
const PLACED_AT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:\d{2})$/

/** A digit string (the read's form) or an integer, from 1 to MAX_ORDER_ID. */
export function orderIdValue (value: unknown): number | undefined {
  const n = typeof value === 'string' && /^[1-9]\d{0,15}$/.test(value) ? Number(value) : value
  return Number.isSafeInteger(n) && (n as number) >= 1 && (n as number) <= MAX_ORDER_ID ? n as number : undefined
}

function amountValue (value: unknown, signed: boolean): string | undefined {
  const amount = decimalValue(value, 2)
  if (amount === undefined || (!signed && amount.startsWith('-'))) return undefined
  return Math.abs(Number(amount)) <= MAX_MONEY ? amount : undefined
}

/** placedAt as the instant (microseconds) and its own calendar day, or undefined when it is not one. */
export function placedAtValue (value: unknown): { micros: bigint, day: string } | undefined {
  if (typeof value !== 'string') return undefined
  const m = PLACED_AT.exec(value)
  if (!m) return undefined
  const [, y, mo, d, h, mi, s = '00', fraction = '', offset] = m
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s))
  const back = new Date(ms)
  // Date.UTC rolls 2026-02-30 over to March: a day or time that does not exist is refused.
  if (back.getUTCDate() !== Number(d) || back.getUTCMonth() !== Number(mo) - 1 || Number(h) > 23 || Number(s) > 59) {
    return undefined
  }
  const offsetMinutes = offset === 'Z' ? 0 : (offset[0] === '-' ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4)))
  if (Math.abs(offsetMinutes) > 18 * 60 || Number(y) < 1970) return undefined
  const micros = BigInt(ms - offsetMinutes * 60_000) * 1000n + BigInt(fraction.padEnd(6, '0'))
  return { micros, day: `${y}-${mo}-${d}` }
}

function checkLines (value: unknown, problems: ItemError[]): OrderLine[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ORDER_LINES) {
    problems.push(O.lines)
    return []
  }
  const lines: OrderLine[] = []
  const seen = new Map<number, number>()
  value.forEach((line: unknown, i) => {
    if (!isPlainObject(line)) { problems.push(O.line(i)); return }
    const id = orderIdValue(line.id)
    const offerId = idValue(line.offerId)
    const quantity = decimalValue(line.quantity, 3)
    const dealId = line.dealId === undefined || line.dealId === null ? null : idValue(line.dealId)
    const before = problems.length
    if (line.id === undefined) problems.push(E.missing(`orderItems[${i}].id`))
    else if (id === undefined) problems.push(O.lineId(i))
    else if (seen.has(id)) problems.push(O.lineIdTwice(i, id, `at orderItems[${seen.get(id)!}]`))
    if (line.offerId === undefined) problems.push(E.missing(`orderItems[${i}].offerId`))
    else if (offerId === undefined) problems.push(O.id(`orderItems[${i}].offerId`))
    if (line.quantity === undefined) problems.push(E.missing(`orderItems[${i}].quantity`))
    else if (quantity === undefined || quantity.startsWith('-') || quantity === '0' || Number(quantity) > MAX_QUANTITY) {
      problems.push(O.quantity(i))
    }
    if (dealId === undefined) problems.push(O.id(`orderItems[${i}].dealId`))
    if (id !== undefined && !seen.has(id)) seen.set(id, i)
    if (problems.length === before) lines.push({ id: id!, offerId: offerId!, quantity: quantity!, dealId: dealId! })
  })
  return lines
}

type Checked = { row: OrderRow, error?: undefined } | { row?: undefined, error: ItemError, id: string | null }

export function checkOrderRow (raw: unknown): Checked {
  if (!isPlainObject(raw)) return { error: E.notAnObject, id: null }
  const problems: ItemError[] = []
  const required = (field: string, ok: boolean, error: ItemError) => {
    if (raw[field] === undefined) problems.push(E.missing(field))
    else if (!ok) problems.push(error)
  }
  const text = (field: string, error: ItemError): string | undefined => {
    const value = textValue(raw[field])
    required(field, value !== undefined, error)
    if (value === 'bad') problems.push(E.unstorable(field))
    return value === 'bad' ? undefined : value
  }
  const orderId = orderIdValue(raw.orderId)
  required('orderId', orderId !== undefined, O.orderId)
  const orderNumber = text('orderNumber', O.orderNumber('orderNumber'))
  const serviceOrderNumber = text('serviceOrderNumber', O.orderNumber('serviceOrderNumber'))
  const companyId = idValue(raw.companyId)
  required('companyId', companyId !== undefined, E.companyId)
  const storeId = idValue(raw.storeId)
  required('storeId', storeId !== undefined, O.id('storeId'))
  const retailerId = idValue(raw.retailerId)
  required('retailerId', retailerId !== undefined, O.id('retailerId'))
  const shopId = raw.shopId === undefined || raw.shopId === null ? null : idValue(raw.shopId)
  if (shopId === undefined) problems.push(O.shopId)
  const deliveryType = text('deliveryType', O.deliveryType)
  const currencyCode = typeof raw.currencyCode === 'string' && /^[A-Z]{3}$/.test(raw.currencyCode) ? raw.currencyCode : undefined
  required('currencyCode', currencyCode !== undefined, O.currencyCode)
  const paymentMode = PAYMENT_MODES.find((m) => m === raw.paymentMode)
  required('paymentMode', paymentMode !== undefined, O.paymentMode)
  const amounts: Partial<OrderAmounts> = {}
  for (const [field, signed] of AMOUNTS) {
    amounts[field] = amountValue(raw[field], signed)
    required(field, amounts[field] !== undefined, O.amount(field, signed))
  }
  const placedAt = placedAtValue(raw.placedAt)
  required('placedAt', placedAt !== undefined, O.placedAt)
  const orderItems = raw.orderItems === undefined
    ? (problems.push(E.missing('orderItems')), [])
    : checkLines(raw.orderItems, problems)
  const id = orderId === undefined ? null : String(orderId)
  if (problems.length > 0) return { error: combined(problems), id }
  return {
    row: {
      orderId: orderId!,
      orderNumber: orderNumber!,
      serviceOrderNumber: serviceOrderNumber!,
      companyId: companyId!,
      storeId: storeId!,
      retailerId: retailerId!,
      shopId: shopId!,
      deliveryType: deliveryType!,
      currencyCode: currencyCode!,
      paymentMode: paymentMode!,
      ...amounts as OrderAmounts,
      placedAt: raw.placedAt as string,
      placedAtMicros: placedAt!.micros,
      placedOn: placedAt!.day,
      orderItems
    }
  }
}

/**
 * Every row of a request checked: the rows to apply, and the outcome of each refused one. An orderId,
 * an orderNumber or a line id already named by an earlier valid row refuses the later row. (The same
 * order sent twice in one request is a mistake of the sender's, not a re-send: re-sends are requests.)
 */
export function checkOrderRows (raws: unknown[]): { valid: CheckedRow<OrderRow>[], outcomes: (RowOutcome | null)[] } {
  const valid: CheckedRow<OrderRow>[] = []
  const outcomes: (RowOutcome | null)[] = raws.map(() => null)
  const orderAt = new Map<number, number>()
  const numberAt = new Map<string, number>()
  const lineAt = new Map<number, number>()
  raws.forEach((raw, index) => {
    const checked = checkOrderRow(raw)
    if (checked.error) { outcomes[index] = refused(checked.id, checked.error); return }
    const { row } = checked
    const id = String(row.orderId)
    if (orderAt.has(row.orderId)) {
      outcomes[index] = refused(id, O.orderIdTwice(row.orderId, orderAt.get(row.orderId)!))
      return
    }
    if (numberAt.has(row.orderNumber)) {
      outcomes[index] = refused(id, O.orderNumberTwice(row.orderNumber, numberAt.get(row.orderNumber)!))
      return
    }
    const twice = row.orderItems.findIndex((l) => lineAt.has(l.id))
    if (twice >= 0) {
      const lineId = row.orderItems[twice].id
      outcomes[index] = refused(id, O.lineIdTwice(twice, lineId, `in the row at index ${lineAt.get(lineId)!}`))
      return
    }
    orderAt.set(row.orderId, index)
    numberAt.set(row.orderNumber, index)
    for (const line of row.orderItems) lineAt.set(line.id, index)
    valid.push({ index, row })
  })
  return { valid, outcomes }
}
