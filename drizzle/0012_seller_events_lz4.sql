-- The events' order JSON (about 3.5 KB each, written once per event in the change's transaction) compressed
-- with lz4 where the server has it: about as small as pglz's at a fraction of the CPU, which is most of the
-- cost of writing the row (bench/README.md "Event log"). A server built without lz4 (the embedded
-- PostgreSQL) says feature_not_supported and keeps pglz. Rows already written keep their compression.
DO $$
BEGIN
  ALTER TABLE "seller_events" ALTER COLUMN "order_json" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'lz4 is not available on this server: seller_events.order_json keeps pglz';
END $$;
