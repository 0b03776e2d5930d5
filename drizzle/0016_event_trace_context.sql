-- The W3C traceparent of the span that recorded an event, when it was sampled: the span of each webhook
-- delivery of the event links to it (src/webhooks/deliverer.ts). Null otherwise, as every row written
-- before this: a null costs a bit in the row's null bitmap, so the event write stays as it was with
-- tracing off. Adding a nullable column with no default rewrites nothing.
ALTER TABLE "seller_events" ADD COLUMN "traceparent" text;
