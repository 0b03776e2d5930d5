/**
 * At most `size` promises pending: add() waits for a free place. The first failure is thrown by the add()
 * or drain() that sees it, after the others in flight have settled (none is left unobserved).
 */
export class Pipeline {
  private readonly pending = new Set<Promise<void>>()
  private failure: { err: unknown } | undefined
  constructor (private readonly size: number) {}

  async add (work: Promise<void>): Promise<void> {
    const tracked: Promise<void> = work
      .catch((err: unknown) => { this.failure ??= { err } })
      .finally(() => { this.pending.delete(tracked) })
    this.pending.add(tracked)
    if (this.pending.size >= this.size) await Promise.race(this.pending)
    if (this.failure !== undefined) { await this.drain() }
  }

  async drain (): Promise<void> {
    await Promise.all(this.pending)
    if (this.failure !== undefined) throw this.failure.err
  }
}
