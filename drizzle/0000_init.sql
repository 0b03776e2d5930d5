CREATE TYPE "public"."credential_kind" AS ENUM('access-token', 'api-key');--> statement-breakpoint
CREATE TYPE "public"."delivery_status" AS ENUM('PENDING', 'DELIVERED', 'FAILED');--> statement-breakpoint
CREATE TYPE "public"."environment" AS ENUM('testing', 'production');--> statement-breakpoint
CREATE TYPE "public"."order_status" AS ENUM('ORDER_PLACED', 'ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER', 'CANCELLED', 'DELIVERED');--> statement-breakpoint
CREATE TYPE "public"."payment_mode" AS ENUM('ONLINE_PAID', 'PREPAID', 'CASH_ON_DELIVERY');--> statement-breakpoint
CREATE TYPE "public"."payout_status" AS ENUM('ON_HOLD', 'SCHEDULED', 'PAID', 'CANCELLED');--> statement-breakpoint
CREATE TYPE "public"."points_entry_kind" AS ENUM('TOP_UP', 'ORDER_ACCEPTANCE', 'ADJUSTMENT');--> statement-breakpoint
CREATE TYPE "public"."refund_status" AS ENUM('PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'MANUAL');--> statement-breakpoint
CREATE TYPE "public"."seller_status" AS ENUM('active', 'suspended');--> statement-breakpoint
CREATE TABLE "credentials" (
	"id" serial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"kind" "credential_kind" NOT NULL,
	"environment" "environment" NOT NULL,
	"key_id" text NOT NULL,
	"secret_hash" text NOT NULL,
	"store_ids" integer[],
	"label" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	CONSTRAINT "credentials_key_id_unique" UNIQUE("key_id")
);
--> statement-breakpoint
CREATE TABLE "daily_deals" (
	"id" serial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"offer_id" integer NOT NULL,
	"deal_date" date NOT NULL,
	"deal_price" numeric(14, 2) NOT NULL,
	"max_quantity" numeric(14, 3) NOT NULL,
	"grabbed_quantity" numeric(14, 3) DEFAULT '0' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "daily_deals_grabbed_non_negative" CHECK ("daily_deals"."grabbed_quantity" >= 0)
);
--> statement-breakpoint
CREATE TABLE "items" (
	"id" serial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"item_name" text NOT NULL,
	"item_sync_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_deliveries" (
	"event_id" text PRIMARY KEY NOT NULL,
	"order_id" bigint NOT NULL,
	"seller_id" integer NOT NULL,
	"channel" text NOT NULL,
	"event_type" text NOT NULL,
	"status" "delivery_status" DEFAULT 'PENDING' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "offers" (
	"id" serial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"sku_id" integer NOT NULL,
	"offer_sync_id" text,
	"purchase_price" numeric(14, 2) NOT NULL,
	"mrp_price_amount" numeric(14, 2) NOT NULL,
	"final_price_with_tax" numeric(14, 2) NOT NULL,
	"currency" text DEFAULT 'INR' NOT NULL,
	"price_range" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "order_effects" (
	"order_id" bigint NOT NULL,
	"kind" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "order_effects_order_id_kind_pk" PRIMARY KEY("order_id","kind")
);
--> statement-breakpoint
CREATE TABLE "order_items" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"order_id" bigint NOT NULL,
	"item_id" integer NOT NULL,
	"sku_id" integer NOT NULL,
	"offer_id" integer NOT NULL,
	"deal_id" integer,
	"quantity" numeric(14, 3) NOT NULL,
	"unit_price" numeric(14, 2) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "order_status_history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"order_id" bigint NOT NULL,
	"from_status" "order_status",
	"to_status" "order_status" NOT NULL,
	"reason" text,
	"credential_id" integer,
	"source" text DEFAULT 'api' NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"store_id" integer NOT NULL,
	"retailer_id" integer NOT NULL,
	"shop_id" integer,
	"order_number" text NOT NULL,
	"service_order_number" text NOT NULL,
	"status" "order_status" DEFAULT 'ORDER_PLACED' NOT NULL,
	"delivery_type" text DEFAULT 'REGULAR' NOT NULL,
	"retailer_name" text NOT NULL,
	"is_actionable" boolean DEFAULT true NOT NULL,
	"currency_code" text DEFAULT 'INR' NOT NULL,
	"order_total" numeric(14, 2) NOT NULL,
	"order_total_final" numeric(14, 2) NOT NULL,
	"order_tax_amount" numeric(14, 2) DEFAULT '0' NOT NULL,
	"order_cess_amount" numeric(14, 2) DEFAULT '0' NOT NULL,
	"applied_points" numeric(14, 2) DEFAULT '0' NOT NULL,
	"total_extra_charges" numeric(14, 2) DEFAULT '0' NOT NULL,
	"round_off" numeric(14, 2) DEFAULT '0' NOT NULL,
	"total_items_in_order" integer NOT NULL,
	"payment_mode" "payment_mode" NOT NULL,
	"is_deleted" boolean DEFAULT false NOT NULL,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "orders_order_number_unique" UNIQUE("order_number")
);
--> statement-breakpoint
CREATE TABLE "outstanding_shipments" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"retailer_sync_id" text NOT NULL,
	"shop_sync_id" text,
	"offer_sync_id" text NOT NULL,
	"outstanding_quantity" numeric NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "outstanding_shipments_key" UNIQUE NULLS NOT DISTINCT("seller_id","retailer_sync_id","shop_sync_id","offer_sync_id"),
	CONSTRAINT "outstanding_shipments_quantity_non_negative" CHECK ("outstanding_shipments"."outstanding_quantity" >= 0)
);
--> statement-breakpoint
CREATE TABLE "payout_schedules" (
	"id" serial PRIMARY KEY NOT NULL,
	"order_id" bigint NOT NULL,
	"seller_id" integer NOT NULL,
	"amount" numeric(14, 2) NOT NULL,
	"status" "payout_status" DEFAULT 'ON_HOLD' NOT NULL,
	"scheduled_for" date,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payout_schedules_order_id_unique" UNIQUE("order_id")
);
--> statement-breakpoint
CREATE TABLE "points_ledger" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"order_id" bigint,
	"kind" "points_entry_kind" NOT NULL,
	"amount" numeric(14, 2) NOT NULL,
	"balance_after" numeric(14, 2) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "points_ledger_order_kind_key" UNIQUE("order_id","kind")
);
--> statement-breakpoint
CREATE TABLE "refunds" (
	"id" serial PRIMARY KEY NOT NULL,
	"order_id" bigint NOT NULL,
	"seller_id" integer NOT NULL,
	"amount" numeric(14, 2) NOT NULL,
	"currency" text DEFAULT 'INR' NOT NULL,
	"status" "refund_status" DEFAULT 'PENDING' NOT NULL,
	"gateway" text,
	"gateway_reference" text,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "refunds_order_id_unique" UNIQUE("order_id")
);
--> statement-breakpoint
CREATE TABLE "retailers" (
	"id" serial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"name" text NOT NULL,
	"first_name" text,
	"last_name" text,
	"phone" text,
	"whatsapp" text,
	"sync_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sellers" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"status" "seller_status" DEFAULT 'active' NOT NULL,
	"points_balance" numeric(14, 2) DEFAULT '0' NOT NULL,
	"take_rate" numeric(6, 4) DEFAULT '0.02' NOT NULL,
	"auto_reject_enabled" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sellers_points_balance_non_negative" CHECK ("sellers"."points_balance" >= 0),
	CONSTRAINT "sellers_take_rate_range" CHECK ("sellers"."take_rate" >= 0 and "sellers"."take_rate" <= 1)
);
--> statement-breakpoint
CREATE TABLE "selling_units" (
	"id" serial PRIMARY KEY NOT NULL,
	"sku_id" integer NOT NULL,
	"name" text NOT NULL,
	"multiplier" numeric(14, 3) DEFAULT '1' NOT NULL,
	"is_base_unit" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE TABLE "shops" (
	"id" serial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"retailer_id" integer NOT NULL,
	"sync_id" text,
	"shop_name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "skus" (
	"id" serial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"item_id" integer NOT NULL,
	"sku_nick_name" text NOT NULL,
	"images" text[] DEFAULT '{}'::text[] NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stores" (
	"id" serial PRIMARY KEY NOT NULL,
	"seller_id" integer NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "credentials" ADD CONSTRAINT "credentials_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "daily_deals" ADD CONSTRAINT "daily_deals_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "daily_deals" ADD CONSTRAINT "daily_deals_offer_id_offers_id_fk" FOREIGN KEY ("offer_id") REFERENCES "public"."offers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "items" ADD CONSTRAINT "items_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_deliveries" ADD CONSTRAINT "notification_deliveries_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_deliveries" ADD CONSTRAINT "notification_deliveries_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_sku_id_skus_id_fk" FOREIGN KEY ("sku_id") REFERENCES "public"."skus"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_effects" ADD CONSTRAINT "order_effects_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_item_id_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "public"."items"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_sku_id_skus_id_fk" FOREIGN KEY ("sku_id") REFERENCES "public"."skus"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_offer_id_offers_id_fk" FOREIGN KEY ("offer_id") REFERENCES "public"."offers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_deal_id_daily_deals_id_fk" FOREIGN KEY ("deal_id") REFERENCES "public"."daily_deals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_status_history" ADD CONSTRAINT "order_status_history_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_status_history" ADD CONSTRAINT "order_status_history_credential_id_credentials_id_fk" FOREIGN KEY ("credential_id") REFERENCES "public"."credentials"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_store_id_stores_id_fk" FOREIGN KEY ("store_id") REFERENCES "public"."stores"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_retailer_id_retailers_id_fk" FOREIGN KEY ("retailer_id") REFERENCES "public"."retailers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outstanding_shipments" ADD CONSTRAINT "outstanding_shipments_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_schedules" ADD CONSTRAINT "payout_schedules_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_schedules" ADD CONSTRAINT "payout_schedules_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_ledger" ADD CONSTRAINT "points_ledger_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "points_ledger" ADD CONSTRAINT "points_ledger_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "retailers" ADD CONSTRAINT "retailers_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "selling_units" ADD CONSTRAINT "selling_units_sku_id_skus_id_fk" FOREIGN KEY ("sku_id") REFERENCES "public"."skus"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shops" ADD CONSTRAINT "shops_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shops" ADD CONSTRAINT "shops_retailer_id_retailers_id_fk" FOREIGN KEY ("retailer_id") REFERENCES "public"."retailers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skus" ADD CONSTRAINT "skus_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skus" ADD CONSTRAINT "skus_item_id_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "public"."items"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stores" ADD CONSTRAINT "stores_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "credentials_seller_idx" ON "credentials" USING btree ("seller_id");--> statement-breakpoint
CREATE INDEX "daily_deals_offer_idx" ON "daily_deals" USING btree ("offer_id");--> statement-breakpoint
CREATE UNIQUE INDEX "items_seller_sync_id_key" ON "items" USING btree ("seller_id","item_sync_id");--> statement-breakpoint
CREATE INDEX "notification_deliveries_order_idx" ON "notification_deliveries" USING btree ("order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "offers_seller_sync_id_key" ON "offers" USING btree ("seller_id","offer_sync_id");--> statement-breakpoint
CREATE INDEX "offers_sku_idx" ON "offers" USING btree ("sku_id");--> statement-breakpoint
CREATE INDEX "order_items_order_idx" ON "order_items" USING btree ("order_id");--> statement-breakpoint
CREATE INDEX "order_status_history_order_idx" ON "order_status_history" USING btree ("order_id");--> statement-breakpoint
CREATE INDEX "orders_seller_created_idx" ON "orders" USING btree ("seller_id","created_at","id") WHERE not "orders"."is_deleted";--> statement-breakpoint
CREATE INDEX "orders_seller_updated_idx" ON "orders" USING btree ("seller_id","updated_at","id") WHERE not "orders"."is_deleted";--> statement-breakpoint
CREATE INDEX "points_ledger_seller_idx" ON "points_ledger" USING btree ("seller_id");--> statement-breakpoint
CREATE UNIQUE INDEX "retailers_seller_sync_id_key" ON "retailers" USING btree ("seller_id","sync_id");--> statement-breakpoint
CREATE INDEX "selling_units_sku_idx" ON "selling_units" USING btree ("sku_id");--> statement-breakpoint
CREATE UNIQUE INDEX "shops_seller_sync_id_key" ON "shops" USING btree ("seller_id","sync_id");--> statement-breakpoint
CREATE INDEX "shops_retailer_idx" ON "shops" USING btree ("retailer_id");--> statement-breakpoint
CREATE INDEX "skus_item_idx" ON "skus" USING btree ("item_id");--> statement-breakpoint
CREATE INDEX "stores_seller_idx" ON "stores" USING btree ("seller_id");