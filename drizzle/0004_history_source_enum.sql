CREATE TYPE "public"."change_source" AS ENUM('api', 'auto-reject', 'seed');--> statement-breakpoint
-- Reordered by hand from drizzle-kit's output: a text default cannot be converted with the column, so it
-- is dropped first and set again on the enum.
ALTER TABLE "order_status_history" ALTER COLUMN "source" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "order_status_history" ALTER COLUMN "source" SET DATA TYPE "public"."change_source" USING "source"::"public"."change_source";--> statement-breakpoint
ALTER TABLE "order_status_history" ALTER COLUMN "source" SET DEFAULT 'api'::"public"."change_source";
