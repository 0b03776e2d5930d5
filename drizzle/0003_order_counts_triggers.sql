-- Keeps order_counts (live orders per seller and store) in step with orders, in the same transaction.
-- Statement-level triggers with transition tables: a bulk insert of 5,000 orders costs one grouped
-- upsert, and an update that changes no live count (a status change) writes nothing. Groups are written
-- in key order so concurrent writers take the counter rows' locks in the same order.
CREATE FUNCTION order_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO order_counts (seller_id, store_id, live_orders)
      SELECT seller_id, store_id, count(*) FROM new_rows WHERE NOT is_deleted GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (seller_id, store_id) DO UPDATE SET live_orders = order_counts.live_orders + excluded.live_orders;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO order_counts (seller_id, store_id, live_orders)
      SELECT seller_id, store_id, sum(delta) FROM (
        SELECT seller_id, store_id, -1 AS delta FROM old_rows WHERE NOT is_deleted
        UNION ALL
        SELECT seller_id, store_id, 1 FROM new_rows WHERE NOT is_deleted
      ) d GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2
      ON CONFLICT (seller_id, store_id) DO UPDATE SET live_orders = order_counts.live_orders + excluded.live_orders;
  ELSE
    UPDATE order_counts c SET live_orders = c.live_orders - d.n
      FROM (SELECT seller_id, store_id, count(*) AS n FROM old_rows WHERE NOT is_deleted GROUP BY 1, 2) d
      WHERE c.seller_id = d.seller_id AND c.store_id = d.store_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER orders_count_insert AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION order_counts_apply();
--> statement-breakpoint
CREATE TRIGGER orders_count_update AFTER UPDATE ON orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION order_counts_apply();
--> statement-breakpoint
CREATE TRIGGER orders_count_delete AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION order_counts_apply();
--> statement-breakpoint
INSERT INTO order_counts (seller_id, store_id, live_orders)
  SELECT seller_id, store_id, count(*) FROM orders WHERE NOT is_deleted GROUP BY 1, 2;
