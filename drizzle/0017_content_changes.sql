CREATE TABLE "content_change_horizon" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"horizon" "xid8" NOT NULL,
	"marks" jsonb DEFAULT '[]'::jsonb NOT NULL,
	CONSTRAINT "content_change_horizon_one_row" CHECK ("content_change_horizon"."id")
);
--> statement-breakpoint
CREATE TABLE "content_changes" (
	"seller_id" integer NOT NULL,
	"order_id" bigint NOT NULL,
	"xid" "xid8" NOT NULL,
	CONSTRAINT "content_changes_seller_id_xid_order_id_pk" PRIMARY KEY("seller_id","xid","order_id")
);
--> statement-breakpoint
ALTER TABLE "seller_events" ADD COLUMN "content_snapshot" "pg_snapshot";--> statement-breakpoint
ALTER TABLE "seller_events" ADD COLUMN "content_xid" "xid8";--> statement-breakpoint
ALTER TABLE "seller_events" ADD COLUMN "order_shape" integer;--> statement-breakpoint
ALTER TABLE "seller_events" ADD COLUMN "base_sequence" bigint;--> statement-breakpoint
ALTER TABLE "seller_events" ADD COLUMN "order_status" "order_status";--> statement-breakpoint
ALTER TABLE "seller_events" ADD COLUMN "order_is_actionable" boolean;--> statement-breakpoint
ALTER TABLE "seller_events" ADD COLUMN "order_updated_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "seller_events_base_idx" ON "seller_events" USING btree ("order_id","sequence") WHERE "seller_events"."content_snapshot" is not null;--> statement-breakpoint
CREATE INDEX "seller_events_small_idx" ON "seller_events" USING btree ("seller_id","base_sequence") WHERE "seller_events"."base_sequence" is not null;