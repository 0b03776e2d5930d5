ALTER TYPE "public"."change_source" ADD VALUE 'platform';--> statement-breakpoint
ALTER TYPE "public"."points_entry_kind" ADD VALUE 'ORDER_CANCELLATION_REFUND';--> statement-breakpoint
CREATE TABLE "seller_retailers" (
	"seller_id" integer NOT NULL,
	"retailer_id" integer NOT NULL,
	"sync_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "seller_retailers_seller_id_retailer_id_pk" PRIMARY KEY("seller_id","retailer_id")
);
--> statement-breakpoint
CREATE TABLE "seller_shops" (
	"seller_id" integer NOT NULL,
	"shop_id" integer NOT NULL,
	"sync_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "seller_shops_seller_id_shop_id_pk" PRIMARY KEY("seller_id","shop_id")
);
--> statement-breakpoint
-- Data: every retailer and shop so far belonged to one seller; that seller's link keeps its sync ID.
INSERT INTO "seller_retailers" ("seller_id", "retailer_id", "sync_id", "created_at")
SELECT "seller_id", "id", "sync_id", "created_at" FROM "retailers";--> statement-breakpoint
INSERT INTO "seller_shops" ("seller_id", "shop_id", "sync_id", "created_at")
SELECT "seller_id", "id", "sync_id", "created_at" FROM "shops";--> statement-breakpoint
ALTER TABLE "retailers" DROP CONSTRAINT "retailers_seller_id_sellers_id_fk";
--> statement-breakpoint
ALTER TABLE "shops" DROP CONSTRAINT "shops_seller_id_sellers_id_fk";
--> statement-breakpoint
DROP INDEX "retailers_seller_sync_id_key";--> statement-breakpoint
DROP INDEX "shops_seller_sync_id_key";--> statement-breakpoint
ALTER TABLE "seller_retailers" ADD CONSTRAINT "seller_retailers_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "seller_retailers" ADD CONSTRAINT "seller_retailers_retailer_id_retailers_id_fk" FOREIGN KEY ("retailer_id") REFERENCES "public"."retailers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "seller_shops" ADD CONSTRAINT "seller_shops_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "seller_shops" ADD CONSTRAINT "seller_shops_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "seller_retailers_sync_id_key" ON "seller_retailers" USING btree ("seller_id","sync_id");--> statement-breakpoint
CREATE UNIQUE INDEX "seller_shops_sync_id_key" ON "seller_shops" USING btree ("seller_id","sync_id");--> statement-breakpoint
ALTER TABLE "retailers" DROP COLUMN "seller_id";--> statement-breakpoint
ALTER TABLE "retailers" DROP COLUMN "sync_id";--> statement-breakpoint
ALTER TABLE "shops" DROP COLUMN "seller_id";--> statement-breakpoint
ALTER TABLE "shops" DROP COLUMN "sync_id";