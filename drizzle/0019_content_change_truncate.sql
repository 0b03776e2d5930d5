-- A TRUNCATE of a table the order's JSON reads (drizzle/0018) changes what existing orders show just as a
-- DELETE does, but fires no row or transition-table trigger: without these, the next status event of an
-- order whose lines, SKU or selling units were truncated would be stored small and read with the removed
-- rows still in it. A TRUNCATE names no rows, so it counts for every seller (0) and every order (0). No
-- service path truncates; this is for an operator's hand, and for the CASCADE of one.
CREATE FUNCTION record_content_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_changes (seller_id, order_id, xid) VALUES (0, 0, pg_current_xact_id()) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER retailers_content_truncate AFTER TRUNCATE ON retailers FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
--> statement-breakpoint
CREATE TRIGGER shops_content_truncate AFTER TRUNCATE ON shops FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
--> statement-breakpoint
CREATE TRIGGER seller_retailers_content_truncate AFTER TRUNCATE ON seller_retailers FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
--> statement-breakpoint
CREATE TRIGGER seller_shops_content_truncate AFTER TRUNCATE ON seller_shops FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
--> statement-breakpoint
CREATE TRIGGER items_content_truncate AFTER TRUNCATE ON items FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
--> statement-breakpoint
CREATE TRIGGER skus_content_truncate AFTER TRUNCATE ON skus FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
--> statement-breakpoint
CREATE TRIGGER offers_content_truncate AFTER TRUNCATE ON offers FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
--> statement-breakpoint
CREATE TRIGGER selling_units_content_truncate AFTER TRUNCATE ON selling_units FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
--> statement-breakpoint
CREATE TRIGGER order_items_content_truncate AFTER TRUNCATE ON order_items FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
--> statement-breakpoint
CREATE TRIGGER orders_content_truncate AFTER TRUNCATE ON orders FOR EACH STATEMENT EXECUTE FUNCTION record_content_truncate();
