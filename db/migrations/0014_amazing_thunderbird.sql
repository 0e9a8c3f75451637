CREATE TABLE "extract_loads" (
	"id" uuid PRIMARY KEY NOT NULL,
	"dataset_id" integer NOT NULL,
	"run_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"superseded_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "extract_loads" ADD CONSTRAINT "extract_loads_dataset_id_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extract_loads" ADD CONSTRAINT "extract_loads_run_id_extract_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."extract_runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "extract_loads_current_idx" ON "extract_loads" USING btree ("dataset_id") WHERE "extract_loads"."superseded_at" is null;--> statement-breakpoint
CREATE INDEX "extract_loads_superseded_idx" ON "extract_loads" USING btree ("superseded_at") WHERE "extract_loads"."superseded_at" is not null;