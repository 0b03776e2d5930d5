CREATE TABLE "order_counts" (
	"seller_id" integer NOT NULL,
	"store_id" integer NOT NULL,
	"live_orders" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "order_counts_seller_id_store_id_pk" PRIMARY KEY("seller_id","store_id")
);
--> statement-breakpoint
ALTER TABLE "order_counts" ADD CONSTRAINT "order_counts_seller_id_sellers_id_fk" FOREIGN KEY ("seller_id") REFERENCES "public"."sellers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_counts" ADD CONSTRAINT "order_counts_store_id_stores_id_fk" FOREIGN KEY ("store_id") REFERENCES "public"."stores"("id") ON DELETE no action ON UPDATE no action;