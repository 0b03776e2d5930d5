ALTER TYPE "public"."credential_kind" ADD VALUE 'platform-key';--> statement-breakpoint
ALTER TABLE "credentials" ALTER COLUMN "seller_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "points_ledger" ADD COLUMN "reference" text;--> statement-breakpoint
ALTER TABLE "points_ledger" ADD CONSTRAINT "points_ledger_seller_reference_key" UNIQUE("seller_id","reference");--> statement-breakpoint
ALTER TABLE "credentials" ADD CONSTRAINT "credentials_seller_by_kind" CHECK (("credentials"."kind"::text = 'platform-key') = ("credentials"."seller_id" is null));