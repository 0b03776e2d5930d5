/*
 * Points are SQL numeric(14,2) and travel as strings. The take-rate arithmetic is done in integer
 * hundredths (BigInt) so no float ever rounds a balance.
 */

/** "123.4" → 12340n; accepts what PostgreSQL prints for numeric (optional sign, up to 2 decimals kept exact). */
export function toCents (value: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value.trim())
  if (!m) throw new Error(`Not a decimal amount: ${value}`)
  const fraction = (m[3] ?? '').padEnd(2, '0')
  if (/[^0]/.test(fraction.slice(2))) throw new Error(`More than 2 decimals: ${value}`)
  const cents = BigInt(m[2]) * 100n + BigInt(fraction.slice(0, 2))
  return m[1] === '-' ? -cents : cents
}

export function formatCents (cents: bigint): string {
  const sign = cents < 0n ? '-' : ''
  const a = cents < 0n ? -cents : cents
  return `${sign}${a / 100n}.${String(a % 100n).padStart(2, '0')}`
}

/**
 * The points an acceptance costs: take rate (numeric(6,4), e.g. "0.0200") × orderTotalFinal, rounded
 * half up to hundredths (the same as SQL round(x, 2) for the non-negative amounts we meet).
 */
export function takeRateCents (takeRate: string, orderTotalFinal: string): bigint {
  const m = /^(\d+)(?:\.(\d{0,4}))?$/.exec(takeRate.trim())
  if (!m) throw new Error(`Not a take rate: ${takeRate}`)
  const rate = BigInt(m[1]) * 10_000n + BigInt((m[2] ?? '').padEnd(4, '0'))
  const total = toCents(orderTotalFinal)
  if (total <= 0n) return 0n
  // cents × rate/10^4 = points in cents; round half up.
  return (total * rate + 5_000n) / 10_000n
}
