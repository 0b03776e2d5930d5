-- The seller's sync IDs stay unique per (seller, type), but the check may wait for the end of the
-- references sync's transaction (SET CONSTRAINTS … DEFERRED): a request that swaps or rotates sync IDs then
-- writes each record once, instead of releasing every changing sync ID and setting it again (two row
-- versions and two rounds of index entries per record; 1.6× the time for a 100,000-row rotation). Every
-- other statement is still checked when it ends (INITIALLY IMMEDIATE). Each constraint takes over the
-- existing unique index (USING INDEX): nothing is rebuilt. src/db/schema.ts still declares the indexes
-- (Drizzle cannot declare a deferrable unique constraint); this migration is what makes them constraints.
ALTER TABLE "seller_retailers" ADD CONSTRAINT "seller_retailers_sync_id_key" UNIQUE USING INDEX "seller_retailers_sync_id_key" DEFERRABLE INITIALLY IMMEDIATE;--> statement-breakpoint
ALTER TABLE "seller_shops" ADD CONSTRAINT "seller_shops_sync_id_key" UNIQUE USING INDEX "seller_shops_sync_id_key" DEFERRABLE INITIALLY IMMEDIATE;--> statement-breakpoint
ALTER TABLE "items" ADD CONSTRAINT "items_seller_sync_id_key" UNIQUE USING INDEX "items_seller_sync_id_key" DEFERRABLE INITIALLY IMMEDIATE;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_seller_sync_id_key" UNIQUE USING INDEX "offers_seller_sync_id_key" DEFERRABLE INITIALLY IMMEDIATE;
