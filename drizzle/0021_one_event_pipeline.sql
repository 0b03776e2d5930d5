-- One event pipeline (issue 40): thin events, one table of subscriptions, one delivery queue and log.
-- Existing data is carried over: events keep their ids and sequences; a seller's webhook endpoints keep
-- their ids, secrets, cursors, pending deliveries and attempt log; pending notifications (their
-- notification_deliveries rows and `notify` jobs) become deliveries of the notification subscriptions.

-- 1. Thin events: the status an event moved its order to, and no stored order (read when the event is read).
ALTER TABLE "seller_events" ADD COLUMN "status" "order_status";--> statement-breakpoint
UPDATE "seller_events" SET "status" = coalesce("order_status", (CASE "type"
    WHEN 'order.placed' THEN 'ORDER_PLACED' WHEN 'order.accepted' THEN 'ORDER_ACCEPTED'
    WHEN 'order.rejected' THEN 'ORDER_REJECTED_BY_SELLER' WHEN 'order.completed' THEN 'ORDER_COMPLETED_BY_SELLER'
    WHEN 'order.cancelled' THEN 'CANCELLED' WHEN 'order.delivered' THEN 'DELIVERED' END)::order_status)
  WHERE "order_id" IS NOT NULL;--> statement-breakpoint
DROP INDEX "seller_events_base_idx";--> statement-breakpoint
DROP INDEX "seller_events_small_idx";--> statement-breakpoint
ALTER TABLE "seller_events" DROP COLUMN "order_json";--> statement-breakpoint
ALTER TABLE "seller_events" DROP COLUMN "order_list_lengths";--> statement-breakpoint
ALTER TABLE "seller_events" DROP COLUMN "content_snapshot";--> statement-breakpoint
ALTER TABLE "seller_events" DROP COLUMN "content_xid";--> statement-breakpoint
ALTER TABLE "seller_events" DROP COLUMN "order_shape";--> statement-breakpoint
ALTER TABLE "seller_events" DROP COLUMN "base_sequence";--> statement-breakpoint
ALTER TABLE "seller_events" DROP COLUMN "order_status";--> statement-breakpoint
ALTER TABLE "seller_events" DROP COLUMN "order_is_actionable";--> statement-breakpoint
ALTER TABLE "seller_events" DROP COLUMN "order_updated_at";--> statement-breakpoint
-- The small events' machinery (0017-0019): the functions take their 35 triggers with them.
DROP FUNCTION "record_content_change"() CASCADE;--> statement-breakpoint
DROP FUNCTION "record_order_content_change"() CASCADE;--> statement-breakpoint
DROP FUNCTION "record_content_truncate"() CASCADE;--> statement-breakpoint
DROP FUNCTION "json_text_values_replaced"(text, text[], text[]);--> statement-breakpoint
DROP TABLE "content_change_horizon";--> statement-breakpoint
DROP TABLE "content_changes";--> statement-breakpoint

-- 2. Subscriptions: the sellers' endpoints, renamed, with a kind; their cursor moves to subscription_cursors.
CREATE TYPE "public"."subscription_kind" AS ENUM('seller-webhook', 'operator-webhook', 'notify-seller', 'notify-customer', 'notify-messaging');--> statement-breakpoint
ALTER TYPE "public"."webhook_endpoint_status" RENAME TO "subscription_status";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" RENAME TO "subscriptions";--> statement-breakpoint
ALTER TABLE "subscriptions" RENAME CONSTRAINT "webhook_endpoints_pkey" TO "subscriptions_pkey";--> statement-breakpoint
ALTER TABLE "subscriptions" RENAME CONSTRAINT "webhook_endpoints_seller_id_sellers_id_fk" TO "subscriptions_seller_id_sellers_id_fk";--> statement-breakpoint
ALTER INDEX "webhook_endpoints_seller_idx" RENAME TO "subscriptions_seller_idx";--> statement-breakpoint
ALTER TABLE "subscriptions" ADD COLUMN "kind" "subscription_kind" DEFAULT 'seller-webhook' NOT NULL;--> statement-breakpoint
ALTER TABLE "subscriptions" ALTER COLUMN "seller_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "subscriptions" ALTER COLUMN "url" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "subscriptions" ALTER COLUMN "secret" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_seller_webhook_complete" CHECK (("subscriptions"."kind" = 'seller-webhook') =
    ("subscriptions"."seller_id" is not null and "subscriptions"."url" is not null and "subscriptions"."secret" is not null));--> statement-breakpoint
CREATE UNIQUE INDEX "subscriptions_shared_kind_idx" ON "subscriptions" USING btree ("kind") WHERE seller_id is null;--> statement-breakpoint
CREATE TABLE "subscription_cursors" (
	"subscription_id" uuid NOT NULL,
	"seller_id" integer NOT NULL,
	"last_sequence" bigint NOT NULL,
	CONSTRAINT "subscription_cursors_subscription_id_seller_id_pk" PRIMARY KEY("subscription_id","seller_id")
);
--> statement-breakpoint
ALTER TABLE "subscription_cursors" ADD CONSTRAINT "subscription_cursors_subscription_id_subscriptions_id_fk" FOREIGN KEY ("subscription_id") REFERENCES "public"."subscriptions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
INSERT INTO "subscription_cursors" ("subscription_id", "seller_id", "last_sequence")
  SELECT "id", "seller_id", "last_sequence" FROM "subscriptions";--> statement-breakpoint
ALTER TABLE "subscriptions" DROP COLUMN "last_sequence";--> statement-breakpoint
-- The kinds for every seller. The notification channels hear what docs/platform/orders.md says (a placement
-- and a delivery: the seller; a decision and a cancellation: everyone) from each seller's next event on; the
-- operator's endpoint is enabled by a worker whose configuration has WEBHOOK_URL (src/delivery/shared-subscriptions.ts).
INSERT INTO "subscriptions" ("kind", "types", "description") VALUES
  ('notify-seller', ARRAY['order.placed', 'order.accepted', 'order.rejected', 'order.completed', 'order.cancelled', 'order.delivered']::event_type[], 'notifications to the seller'),
  ('notify-customer', ARRAY['order.accepted', 'order.rejected', 'order.completed', 'order.cancelled']::event_type[], 'notifications to the customer'),
  ('notify-messaging', ARRAY['order.accepted', 'order.rejected', 'order.completed', 'order.cancelled']::event_type[], 'messages to the retailer''s messaging app');--> statement-breakpoint
INSERT INTO "subscriptions" ("kind", "status", "disabled_reason", "description") VALUES
  ('operator-webhook', 'DISABLED', 'WEBHOOK_URL is not set', 'the operator''s endpoint for every seller (WEBHOOK_URL)');--> statement-breakpoint
INSERT INTO "subscription_cursors" ("subscription_id", "seller_id", "last_sequence")
  SELECT s."id", c."seller_id", c."last_sequence" FROM "subscriptions" s CROSS JOIN "seller_event_counters" c
  WHERE s."seller_id" IS NULL;--> statement-breakpoint

-- 3. One queue: the endpoints' deliveries, renamed.
ALTER TABLE "webhook_deliveries" RENAME TO "deliveries";--> statement-breakpoint
ALTER TABLE "deliveries" RENAME COLUMN "endpoint_id" TO "subscription_id";--> statement-breakpoint
ALTER TABLE "deliveries" RENAME CONSTRAINT "webhook_deliveries_pkey" TO "deliveries_pkey";--> statement-breakpoint
ALTER TABLE "deliveries" RENAME CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" TO "deliveries_subscription_id_subscriptions_id_fk";--> statement-breakpoint
ALTER SEQUENCE "webhook_deliveries_id_seq" RENAME TO "deliveries_id_seq";--> statement-breakpoint
ALTER INDEX "webhook_deliveries_endpoint_due_idx" RENAME TO "deliveries_subscription_due_idx";--> statement-breakpoint
ALTER INDEX "webhook_deliveries_leased_idx" RENAME TO "deliveries_leased_idx";--> statement-breakpoint
ALTER INDEX "webhook_deliveries_due_idx" RENAME TO "deliveries_due_idx";--> statement-breakpoint
ALTER INDEX "webhook_deliveries_order_idx" RENAME TO "deliveries_order_idx";--> statement-breakpoint
ALTER INDEX "webhook_deliveries_finished_brin" RENAME TO "deliveries_finished_brin";--> statement-breakpoint
ALTER TABLE "webhook_attempts" RENAME TO "delivery_attempts";--> statement-breakpoint
ALTER TABLE "delivery_attempts" RENAME COLUMN "endpoint_id" TO "subscription_id";--> statement-breakpoint
ALTER TABLE "delivery_attempts" RENAME CONSTRAINT "webhook_attempts_pkey" TO "delivery_attempts_pkey";--> statement-breakpoint
ALTER TABLE "delivery_attempts" RENAME CONSTRAINT "webhook_attempts_endpoint_id_webhook_endpoints_id_fk" TO "delivery_attempts_subscription_id_subscriptions_id_fk";--> statement-breakpoint
ALTER SEQUENCE "webhook_attempts_id_seq" RENAME TO "delivery_attempts_id_seq";--> statement-breakpoint
ALTER INDEX "webhook_attempts_endpoint_idx" RENAME TO "delivery_attempts_subscription_idx";--> statement-breakpoint

-- 4. Pending notifications become deliveries of their channel's subscription, for the event that caused
-- them (the order's latest event of that type), with the attempts they had; their jobs go. A notification
-- whose event the log no longer keeps cannot be sent as an event: it is dropped, and counted in a notice.
DO $$
DECLARE
  carried int;
  dropped int;
BEGIN
  INSERT INTO "deliveries" ("subscription_id", "seller_id", "sequence", "type", "order_id", "attempts", "created_at")
  SELECT s."id", e."seller_id", e."sequence", e."type", n."order_id", n."attempts", n."created_at"
  FROM "notification_deliveries" n
  JOIN "subscriptions" s ON s."kind" = ('notify-' || n."channel")::subscription_kind
  CROSS JOIN LATERAL (SELECT e."seller_id", e."sequence", e."type" FROM "seller_events" e
    WHERE e."seller_id" = n."seller_id" AND e."order_id" = n."order_id" AND e."type"::text = n."event_type"
    ORDER BY e."sequence" DESC LIMIT 1) e
  WHERE n."status" = 'PENDING' AND n."channel" IN ('seller', 'customer', 'messaging')
  ORDER BY n."created_at", n."event_id";
  GET DIAGNOSTICS carried = ROW_COUNT;
  SELECT count(*) - carried INTO dropped FROM "notification_deliveries" WHERE "status" = 'PENDING';
  IF dropped > 0 THEN
    RAISE NOTICE '% pending notifications name no event the log still keeps: not carried over', dropped;
  END IF;
  IF to_regclass('graphile_worker._private_jobs') IS NOT NULL THEN
    DELETE FROM graphile_worker._private_jobs j USING graphile_worker._private_tasks t
    WHERE t.id = j.task_id AND t.identifier = 'notify';
  END IF;
END $$;--> statement-breakpoint
DROP TABLE "notification_deliveries";--> statement-breakpoint
-- The notifications' states and the deliveries' were the same three: one type, under the shorter name.
DROP TYPE "public"."delivery_status";--> statement-breakpoint
ALTER TYPE "public"."webhook_delivery_status" RENAME TO "delivery_status";--> statement-breakpoint

-- 5. The deliverers' wake-up (0014) names the table it checks: every kind's subscriptions now.
CREATE OR REPLACE FUNCTION seller_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM subscriptions WHERE status = 'ENABLED') THEN
    PERFORM pg_notify('seller_events', '');
  END IF;
  RETURN NULL;
END
$$;
