CREATE TYPE "public"."event_type" AS ENUM('order.placed', 'order.accepted', 'order.rejected', 'order.completed', 'order.cancelled', 'order.delivered', 'webhook.test');--> statement-breakpoint
CREATE TABLE "seller_event_counters" (
	"seller_id" integer PRIMARY KEY NOT NULL,
	"last_sequence" bigint NOT NULL,
	CONSTRAINT "seller_event_counters_last_sequence_positive" CHECK ("seller_event_counters"."last_sequence" > 0)
);
--> statement-breakpoint
CREATE TABLE "seller_events" (
	"seller_id" integer NOT NULL,
	"sequence" bigint NOT NULL,
	"type" "event_type" NOT NULL,
	"order_id" bigint,
	"store_id" integer,
	"previous_status" "order_status",
	"reason" text,
	"order_json" text,
	"order_list_lengths" integer[],
	"occurred_at" timestamp with time zone NOT NULL,
	CONSTRAINT "seller_events_seller_id_sequence_pk" PRIMARY KEY("seller_id","sequence")
);
--> statement-breakpoint
ALTER TABLE "seller_event_counters" ADD CONSTRAINT "seller_event_counters_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "seller_events_occurred_brin" ON "seller_events" USING brin ("occurred_at");