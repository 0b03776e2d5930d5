-- content_changes: which transaction changed, for which seller (0: every seller) and order (0: any), what
-- an order's JSON shows other than its status (src/orders/order-json.ts FULL_ORDER reads these tables).
-- The event log reads it to know whether a status event may reuse the order's last built JSON
-- (src/events/record-events.ts). Kept by triggers so that no write path can forget it, statement-level
-- with transition tables so that a references sync of 10,000 rows writes one row, and lock-free: rows are
-- keyed by the writer's own transaction id, so writers never wait on each other here.
-- What does not change an existing order's JSON records nothing: inserts of items, SKUs, retailers, shops,
-- orders, and lines of an order with no event yet (no existing order shows a record created after it), and an
-- order's own status
-- change (status, is_actionable, updated_at are the status event's own).
CREATE FUNCTION record_content_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- TG_ARGV: the seller and the order of a changed row `r`, and which rows count, as SQL over it (the
  -- trigger's own constants, never a value).
  EXECUTE format('INSERT INTO content_changes (seller_id, order_id, xid)
      SELECT DISTINCT %s, %s, pg_current_xact_id() FROM %I r WHERE %s ON CONFLICT DO NOTHING',
    TG_ARGV[0], TG_ARGV[1], CASE WHEN TG_OP = 'DELETE' THEN 'changed_old' ELSE 'changed_new' END,
    coalesce(TG_ARGV[2], 'true'));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION record_order_content_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_changes (seller_id, order_id, xid) VALUES (OLD.seller_id, OLD.id, pg_current_xact_id())
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER retailers_content_update AFTER UPDATE ON retailers REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('0', '0');
--> statement-breakpoint
CREATE TRIGGER retailers_content_delete AFTER DELETE ON retailers REFERENCING OLD TABLE AS changed_old
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('0', '0');
--> statement-breakpoint
CREATE TRIGGER shops_content_update AFTER UPDATE ON shops REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('0', '0');
--> statement-breakpoint
CREATE TRIGGER shops_content_delete AFTER DELETE ON shops REFERENCING OLD TABLE AS changed_old
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('0', '0');
--> statement-breakpoint
CREATE TRIGGER seller_retailers_content_insert AFTER INSERT ON seller_retailers REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER seller_retailers_content_update AFTER UPDATE ON seller_retailers REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER seller_retailers_content_delete AFTER DELETE ON seller_retailers REFERENCING OLD TABLE AS changed_old
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER seller_shops_content_insert AFTER INSERT ON seller_shops REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER seller_shops_content_update AFTER UPDATE ON seller_shops REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER seller_shops_content_delete AFTER DELETE ON seller_shops REFERENCING OLD TABLE AS changed_old
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER items_content_update AFTER UPDATE ON items REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER items_content_delete AFTER DELETE ON items REFERENCING OLD TABLE AS changed_old
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER skus_content_update AFTER UPDATE ON skus REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER skus_content_delete AFTER DELETE ON skus REFERENCING OLD TABLE AS changed_old
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
-- A new offer joins its SKU's offers list, which every order with a line of that SKU shows.
CREATE TRIGGER offers_content_insert AFTER INSERT ON offers REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER offers_content_update AFTER UPDATE ON offers REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
CREATE TRIGGER offers_content_delete AFTER DELETE ON offers REFERENCING OLD TABLE AS changed_old
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change('r.seller_id', '0');
--> statement-breakpoint
-- Likewise a SKU's selling units. They have no seller column: their SKU's (0, every seller, if it is gone).
CREATE TRIGGER selling_units_content_insert AFTER INSERT ON selling_units REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change(
    'coalesce((select k.seller_id from skus k where k.id = r.sku_id), 0)', '0');
--> statement-breakpoint
CREATE TRIGGER selling_units_content_update AFTER UPDATE ON selling_units REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change(
    'coalesce((select k.seller_id from skus k where k.id = r.sku_id), 0)', '0');
--> statement-breakpoint
CREATE TRIGGER selling_units_content_delete AFTER DELETE ON selling_units REFERENCING OLD TABLE AS changed_old
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change(
    'coalesce((select k.seller_id from skus k where k.id = r.sku_id), 0)', '0');
--> statement-breakpoint
-- An order's lines: that order only (its seller's, or every seller's if the order is gone). A line added to an
-- order that already has a built event (a base) counts (no route does that today); the lines of a new order,
-- placed before its first event is recorded, do not.
CREATE TRIGGER order_items_content_insert AFTER INSERT ON order_items REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change(
    'coalesce((select o.seller_id from orders o where o.id = r.order_id), 0)', 'r.order_id',
    'exists (select 1 from seller_events b where b.order_id = r.order_id and b.content_snapshot is not null)');
--> statement-breakpoint
CREATE TRIGGER order_items_content_update AFTER UPDATE ON order_items REFERENCING NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change(
    'coalesce((select o.seller_id from orders o where o.id = r.order_id), 0)', 'r.order_id');
--> statement-breakpoint
CREATE TRIGGER order_items_content_delete AFTER DELETE ON order_items REFERENCING OLD TABLE AS changed_old
  FOR EACH STATEMENT EXECUTE FUNCTION record_content_change(
    'coalesce((select o.seller_id from orders o where o.id = r.order_id), 0)', 'r.order_id');
--> statement-breakpoint
-- An order's own fields other than the three a status change sets: row-level, so that an update that sets
-- them to what they were (the seed's history sets is_deleted on every order) records nothing. A column list
-- keeps the trigger from being considered at all by the status change's UPDATE. Every column of orders is
-- either listed here or one of status, is_actionable, updated_at (test/event-content-changes.test.ts holds it).
CREATE TRIGGER orders_content_update AFTER UPDATE OF seller_id, store_id, retailer_id, shop_id, order_number,
    service_order_number, delivery_type, retailer_name, currency_code, order_total, order_total_final,
    order_tax_amount, order_cess_amount, applied_points, total_extra_charges, round_off, total_items_in_order,
    payment_mode, is_deleted, deleted_at, created_at, id ON orders
  FOR EACH ROW WHEN ((OLD.seller_id, OLD.store_id, OLD.retailer_id, OLD.shop_id, OLD.order_number,
    OLD.service_order_number, OLD.delivery_type, OLD.retailer_name, OLD.currency_code, OLD.order_total,
    OLD.order_total_final, OLD.order_tax_amount, OLD.order_cess_amount, OLD.applied_points, OLD.total_extra_charges,
    OLD.round_off, OLD.total_items_in_order, OLD.payment_mode, OLD.is_deleted, OLD.deleted_at, OLD.created_at, OLD.id)
    IS DISTINCT FROM (NEW.seller_id, NEW.store_id, NEW.retailer_id, NEW.shop_id, NEW.order_number,
    NEW.service_order_number, NEW.delivery_type, NEW.retailer_name, NEW.currency_code, NEW.order_total,
    NEW.order_total_final, NEW.order_tax_amount, NEW.order_cess_amount, NEW.applied_points, NEW.total_extra_charges,
    NEW.round_off, NEW.total_items_in_order, NEW.payment_mode, NEW.is_deleted, NEW.deleted_at, NEW.created_at, NEW.id))
  EXECUTE FUNCTION record_order_content_change();
--> statement-breakpoint
CREATE TRIGGER orders_content_delete AFTER DELETE ON orders FOR EACH ROW EXECUTE FUNCTION record_order_content_change();
--> statement-breakpoint
-- Nothing was recorded before this migration, and no event before it is a base (content_snapshot null).
INSERT INTO content_change_horizon (horizon) VALUES (pg_current_xact_id());
--> statement-breakpoint
-- A stored JSON text with some values replaced, in order: for each i, the value that follows the next
-- keys[i] (a key as written, `,"name":`) becomes vals[i]. A value is a JSON string with no escape in it, or a
-- literal (true, false, null, a number) that ends at the next `,` or `}`. The event log's small status events
-- are read through it (src/events/event-order-text.ts): their base's order with its status, isActionable
-- and updatedAt. Raises rather than guess if a key is missing or a value is not of that kind.
CREATE FUNCTION json_text_values_replaced(j text, keys text[], vals text[]) RETURNS text
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  done text := '';
  rest int := 1;
  val int;
  k int;
  len int;
BEGIN
  FOR i IN 1 .. coalesce(array_length(keys, 1), 0) LOOP
    k := strpos(substr(j, rest), keys[i]);
    IF k = 0 OR vals[i] IS NULL THEN
      RAISE EXCEPTION 'json_text_values_replaced: no % in the text, or no value for it', keys[i];
    END IF;
    val := rest + k - 1 + length(keys[i]);
    IF substr(j, val, 1) = '"' THEN
      len := strpos(substr(j, val + 1), '"') + 1;
      IF len = 1 OR strpos(substr(j, val, len), '\') > 0 THEN
        RAISE EXCEPTION 'json_text_values_replaced: the value of % is not a plain string', keys[i];
      END IF;
    ELSE
      len := least(nullif(strpos(substr(j, val), ','), 0), nullif(strpos(substr(j, val), '}'), 0)) - 1;
      IF len IS NULL OR len < 1 THEN
        RAISE EXCEPTION 'json_text_values_replaced: the value of % does not end', keys[i];
      END IF;
    END IF;
    done := done || substr(j, rest, val - rest) || vals[i];
    rest := val + len;
  END LOOP;
  RETURN done || substr(j, rest);
END $$;
