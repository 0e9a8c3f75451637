CREATE TABLE "dataset_cls_rules" (
	"id" serial PRIMARY KEY NOT NULL,
	"dataset_id" integer NOT NULL,
	"field_ids" integer[] NOT NULL,
	"action" text NOT NULL,
	"user_ids" integer[] DEFAULT '{}'::int[] NOT NULL,
	"group_ids" integer[] DEFAULT '{}'::int[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dataset_cls_rules_action_ck" CHECK ("dataset_cls_rules"."action" in ('hide', 'mask'))
);
--> statement-breakpoint
ALTER TABLE "dataset_cls_rules" ADD CONSTRAINT "dataset_cls_rules_dataset_id_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dataset_cls_rules_dataset_idx" ON "dataset_cls_rules" USING btree ("dataset_id");