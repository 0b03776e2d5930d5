/** A small seeded PRNG (mulberry32): the same seed gives the same demo data on every machine. */
export class Random {
  private state: number
  constructor (seed: number) { this.state = seed >>> 0 }

  next (): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  int (min: number, max: number): number { return min + Math.floor(this.next() * (max - min + 1)) }
  pick<T> (list: readonly T[]): T { return list[Math.floor(this.next() * list.length)] }
  chance (p: number): boolean { return this.next() < p }

  /** Picks a key by weight. */
  weighted<K extends string> (weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as Array<[K, number]>
    let r = this.next() * entries.reduce((s, [, w]) => s + w, 0)
    for (const [k, w] of entries) { r -= w; if (r < 0) return k }
    return entries[entries.length - 1][0]
  }
}
