CREATE TABLE "dataset_rls_rules" (
	"id" serial PRIMARY KEY NOT NULL,
	"dataset_id" integer NOT NULL,
	"field_id" integer NOT NULL,
	"attribute" text NOT NULL,
	"operator" text NOT NULL,
	"user_ids" integer[] DEFAULT '{}'::int[] NOT NULL,
	"group_ids" integer[] DEFAULT '{}'::int[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dataset_rls_rules_operator_ck" CHECK ("dataset_rls_rules"."operator" in ('in', 'eq'))
);
--> statement-breakpoint
ALTER TABLE "dataset_rls_rules" ADD CONSTRAINT "dataset_rls_rules_dataset_id_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dataset_rls_rules" ADD CONSTRAINT "dataset_rls_rules_field_id_dataset_fields_id_fk" FOREIGN KEY ("field_id") REFERENCES "public"."dataset_fields"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dataset_rls_rules_dataset_idx" ON "dataset_rls_rules" USING btree ("dataset_id");--> statement-breakpoint
CREATE INDEX "dataset_rls_rules_field_idx" ON "dataset_rls_rules" USING btree ("field_id");