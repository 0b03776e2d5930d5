-- Wakes the webhook deliverers (src/webhooks/deliverer.ts LISTENs on seller_events) when events are
-- recorded, once per statement and only while some endpoint is enabled: the notification is sent at
-- commit, so a deliverer never looks before the events are visible, and a status change with no endpoint
-- anywhere pays one index probe. A statement-level trigger rather than a pg_notify in each writer: every
-- path that records events (status batches, placements, auto-rejections, test and disabled events) is
-- covered by the table itself.
CREATE FUNCTION seller_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM webhook_endpoints WHERE status = 'ENABLED') THEN
    PERFORM pg_notify('seller_events', '');
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER seller_events_notify AFTER INSERT ON seller_events
  FOR EACH STATEMENT EXECUTE FUNCTION seller_events_notify();
