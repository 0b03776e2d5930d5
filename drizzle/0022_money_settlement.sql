ALTER TABLE "payout_schedules" ADD COLUMN "reference" text;--> statement-breakpoint
ALTER TABLE "payout_schedules" ADD COLUMN "paid_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "refunds" ADD COLUMN "reference" text;--> statement-breakpoint
ALTER TABLE "refunds" ADD COLUMN "settled_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "payout_schedules_status_id_idx" ON "payout_schedules" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "payout_schedules_seller_id_idx" ON "payout_schedules" USING btree ("seller_id","id");--> statement-breakpoint
CREATE INDEX "payout_schedules_created_at_idx" ON "payout_schedules" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "points_ledger_seller_id_idx" ON "points_ledger" USING btree ("seller_id","id");--> statement-breakpoint
CREATE INDEX "refunds_status_id_idx" ON "refunds" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "refunds_seller_id_idx" ON "refunds" USING btree ("seller_id","id");--> statement-breakpoint
CREATE INDEX "refunds_created_at_idx" ON "refunds" USING btree ("created_at");