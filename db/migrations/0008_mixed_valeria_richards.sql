CREATE TABLE "dataset_extractions" (
	"dataset_id" integer PRIMARY KEY NOT NULL,
	"mode" text DEFAULT 'full' NOT NULL,
	"incremental_field_id" integer,
	"schedule" text,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dataset_extractions_mode_ck" CHECK ("dataset_extractions"."mode" in ('full', 'incremental'))
);
--> statement-breakpoint
CREATE TABLE "extract_run_steps" (
	"id" serial PRIMARY KEY NOT NULL,
	"run_id" integer NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"state" text NOT NULL,
	"message" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "extract_runs" (
	"id" serial PRIMARY KEY NOT NULL,
	"dataset_id" integer NOT NULL,
	"mode" text NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"user_id" integer,
	"trigger" text DEFAULT 'manual' NOT NULL,
	"boss_job_id" uuid,
	"rows_loaded" bigint DEFAULT 0 NOT NULL,
	"rows_total" bigint,
	"error" text,
	"cancel_requested" boolean DEFAULT false NOT NULL,
	"heartbeat_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	CONSTRAINT "extract_runs_state_ck" CHECK ("extract_runs"."state" in ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
	CONSTRAINT "extract_runs_mode_ck" CHECK ("extract_runs"."mode" in ('full', 'incremental'))
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"kind" text NOT NULL,
	"title" text NOT NULL,
	"message" text DEFAULT '' NOT NULL,
	"object_type" text,
	"object_id" integer,
	"read" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dataset_extractions" ADD CONSTRAINT "dataset_extractions_dataset_id_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dataset_extractions" ADD CONSTRAINT "dataset_extractions_incremental_field_id_dataset_fields_id_fk" FOREIGN KEY ("incremental_field_id") REFERENCES "public"."dataset_fields"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extract_run_steps" ADD CONSTRAINT "extract_run_steps_run_id_extract_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."extract_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extract_runs" ADD CONSTRAINT "extract_runs_dataset_id_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extract_runs" ADD CONSTRAINT "extract_runs_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "extract_run_steps_run_idx" ON "extract_run_steps" USING btree ("run_id","id");--> statement-breakpoint
CREATE INDEX "extract_runs_dataset_idx" ON "extract_runs" USING btree ("dataset_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "extract_runs_one_active_idx" ON "extract_runs" USING btree ("dataset_id") WHERE "extract_runs"."state" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "notifications_user_idx" ON "notifications" USING btree ("user_id","read","id");