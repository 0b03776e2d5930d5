// One query for the orders whose status history is not a chain.
/*
 * One query over the whole database: the orders whose status history is not a chain. Every order's
 * order_status_history, read in time order (changed_at, then id), must start at null, each step's
 * from_status be the previous step's to_status, the times strictly increase, and the last step end in
 * the order's current status. Used after every seed path (test/seed/seed.test.ts, test/cli/cli.test.ts).
 */
export const BROKEN_HISTORIES_SQL = `
  with steps as (
    select h.order_id, h.from_status, h.to_status, h.changed_at,
      lag(h.to_status) over w as previous_status,
      lag(h.changed_at) over w as previous_at,
      row_number() over w as step,
      count(*) over (partition by h.order_id) as steps
    from order_status_history h
    window w as (partition by h.order_id order by h.changed_at, h.id)
  ),
  broken as (
    select o.id, o.status, 'no history' as problem from orders o
      where not exists (select 1 from order_status_history h where h.order_id = o.id)
    union all
    select s.order_id, o.status, case
        when s.step = 1 and s.from_status is not null then 'does not start at null'
        when s.step > 1 and s.from_status is distinct from s.previous_status then 'not a chain'
        when s.step > 1 and s.changed_at <= s.previous_at then 'time does not increase'
        else 'does not end in the current status' end
      from steps s join orders o on o.id = s.order_id
      where (s.step = 1 and s.from_status is not null)
        or (s.step > 1 and (s.from_status is distinct from s.previous_status or s.changed_at <= s.previous_at))
        or (s.step = s.steps and s.to_status <> o.status)
  )
  select count(distinct id)::int as broken, (select count(*) from orders)::int as orders,
    (select json_agg(b) from (select * from broken order by id limit 5) b) as examples
  from broken`

export interface HistoryCheck { broken: number, orders: number, examples: unknown }

/** Runs BROKEN_HISTORIES_SQL with any postgres.js client. */
export async function brokenHistories (
  sql: { unsafe: (query: string) => PromiseLike<unknown[]> }
): Promise<HistoryCheck> {
  const [row] = await sql.unsafe(BROKEN_HISTORIES_SQL) as HistoryCheck[]
  return row
}
