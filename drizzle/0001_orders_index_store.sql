DROP INDEX "orders_seller_created_idx";--> statement-breakpoint
DROP INDEX "orders_seller_updated_idx";--> statement-breakpoint
CREATE INDEX "orders_seller_created_idx" ON "orders" USING btree ("seller_id","created_at","id","store_id") WHERE not "orders"."is_deleted";--> statement-breakpoint
CREATE INDEX "orders_seller_updated_idx" ON "orders" USING btree ("seller_id","updated_at","id","store_id") WHERE not "orders"."is_deleted";