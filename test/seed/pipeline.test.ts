import t from 'tap'
import { Pipeline } from '../../src/seed/pipeline.js'

/*
 * The seed's batches in flight (src/seed/pipeline.ts): never more than its size at once, every batch run,
 * and a failing batch stops the seed with its own error after the others in flight have settled.
 */

/** Work that takes `n` turns of the microtask queue: batches of other lengths end in their own order, no clock. */
const turns = async (n: number): Promise<void> => { for (let i = 0; i < n; i++) await Promise.resolve() }

t.test('never more than its size in flight, and every piece of work finishes', async (t) => {
  const pipeline = new Pipeline(3)
  let running = 0
  let peak = 0
  const done: number[] = []
  for (let i = 0; i < 20; i++) {
    await pipeline.add((async () => {
      running++
      peak = Math.max(peak, running)
      await turns(1 + (i * 7) % 5)
      running--
      done.push(i)
    })())
  }
  await pipeline.drain()
  t.equal(peak, 3, 'three at once, no more')
  t.same([...done].sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i), 'all twenty ran')
  t.equal(running, 0)
})

t.test('a failure is thrown once the others in flight settled, and nothing is left unobserved', async (t) => {
  const pipeline = new Pipeline(3)
  let settled = 0
  const slow = async (): Promise<void> => { await turns(30); settled++ }
  await pipeline.add(slow())
  await pipeline.add((async () => { await turns(1); throw new Error('batch 2 refused') })())
  // The third fills the pipeline: add() waits for the first to settle (the failure), then drains the rest.
  await t.rejects(pipeline.add(slow()), { message: 'batch 2 refused' })
  t.equal(settled, 2, 'both other batches finished before the error surfaced')
  await t.rejects(pipeline.drain(), { message: 'batch 2 refused' }, 'drain reports it too')
})

t.test('a failure with room left is reported by drain', async (t) => {
  const pipeline = new Pipeline(4)
  await pipeline.add(Promise.reject(new Error('only batch')))
  await t.rejects(pipeline.drain(), { message: 'only batch' })
})
