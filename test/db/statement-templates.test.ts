import t from 'tap'
import { sql } from 'drizzle-orm'
import { slot, StatementTemplates } from '../../src/db/statements.js'

/*
 * A statement template keeps the text of a shape and reads each request's values through slots; a value
 * computed while building would be baked into every later request's statement, so it is refused.
 */

interface Context { seller: number, day: string | null }

t.test('one text per shape, each request its own values', async (t) => {
  const templates = new StatementTemplates<Context>(2)
  let builds = 0
  const build = (day: string | null) => () => {
    builds++
    const seller = slot((c: Context) => c.seller)
    const filter = day === null ? sql`` : sql` and day = ${slot((c: Context) => c.day)}::date`
    return sql`select * from orders where seller_id = ${seller}::int${filter}`
  }
  const a = templates.query('all', build(null), { seller: 1, day: null })
  const b = templates.query('all', build(null), { seller: 2, day: null })
  t.equal(builds, 1, 'built once')
  t.equal(a.sql, b.sql)
  t.same([a.params, b.params], [[1], [2]])
  const c = templates.query('day', build('x'), { seller: 3, day: '2026-10-15' })
  t.same(c.params, [3, '2026-10-15'])
  t.match(c.sql, /\$2::date/)
  templates.query('third', build(null), { seller: 4, day: null })
  templates.query('all', build(null), { seller: 5, day: null })
  t.equal(builds, 4, 'at most `capacity` shapes are kept: the oldest is built again')
})

t.test('a value that is not a slot is refused', async (t) => {
  const templates = new StatementTemplates<Context>()
  t.throws(() => templates.query('bad', () => sql`select ${1 + 1}::int, ${slot((c: Context) => c.seller)}`, { seller: 1, day: null }),
    /parameter 1 is not a slot/)
})
