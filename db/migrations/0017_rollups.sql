CREATE TABLE "dataset_rollups" (
	"id" serial PRIMARY KEY NOT NULL,
	"dataset_id" integer NOT NULL,
	"name" text NOT NULL,
	"dimensions" jsonb NOT NULL,
	"measures" jsonb NOT NULL,
	"refresh_mode" text DEFAULT 'with_extract' NOT NULL,
	"cron" text,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"author_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dataset_rollups_refresh_ck" CHECK ("dataset_rollups"."refresh_mode" in ('with_extract', 'schedule'))
);
--> statement-breakpoint
CREATE TABLE "rollup_build_steps" (
	"id" serial PRIMARY KEY NOT NULL,
	"build_id" integer NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"state" text NOT NULL,
	"message" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rollup_builds" (
	"id" serial PRIMARY KEY NOT NULL,
	"rollup_id" integer NOT NULL,
	"dataset_id" integer NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"trigger" text DEFAULT 'manual' NOT NULL,
	"user_id" integer,
	"boss_job_id" uuid,
	"rows" bigint,
	"error" text,
	"cancel_requested" boolean DEFAULT false NOT NULL,
	"heartbeat_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	CONSTRAINT "rollup_builds_state_ck" CHECK ("rollup_builds"."state" in ('queued', 'running', 'succeeded', 'failed', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "rollup_loads" (
	"id" uuid PRIMARY KEY NOT NULL,
	"rollup_id" integer NOT NULL,
	"dataset_id" integer NOT NULL,
	"build_id" integer,
	"dataset_version" integer NOT NULL,
	"extract_load_id" uuid,
	"rows" bigint NOT NULL,
	"bytes" bigint NOT NULL,
	"built_at" timestamp with time zone DEFAULT now() NOT NULL,
	"superseded_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "dataset_rollups" ADD CONSTRAINT "dataset_rollups_dataset_id_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dataset_rollups" ADD CONSTRAINT "dataset_rollups_author_id_users_id_fk" FOREIGN KEY ("author_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollup_build_steps" ADD CONSTRAINT "rollup_build_steps_build_id_rollup_builds_id_fk" FOREIGN KEY ("build_id") REFERENCES "public"."rollup_builds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollup_builds" ADD CONSTRAINT "rollup_builds_rollup_id_dataset_rollups_id_fk" FOREIGN KEY ("rollup_id") REFERENCES "public"."dataset_rollups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollup_builds" ADD CONSTRAINT "rollup_builds_dataset_id_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollup_builds" ADD CONSTRAINT "rollup_builds_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollup_loads" ADD CONSTRAINT "rollup_loads_rollup_id_dataset_rollups_id_fk" FOREIGN KEY ("rollup_id") REFERENCES "public"."dataset_rollups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollup_loads" ADD CONSTRAINT "rollup_loads_build_id_rollup_builds_id_fk" FOREIGN KEY ("build_id") REFERENCES "public"."rollup_builds"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "dataset_rollups_name_idx" ON "dataset_rollups" USING btree ("dataset_id","name");--> statement-breakpoint
CREATE INDEX "rollup_build_steps_build_idx" ON "rollup_build_steps" USING btree ("build_id","id");--> statement-breakpoint
CREATE INDEX "rollup_builds_rollup_idx" ON "rollup_builds" USING btree ("rollup_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "rollup_builds_one_active_idx" ON "rollup_builds" USING btree ("rollup_id") WHERE "rollup_builds"."state" in ('queued', 'running');--> statement-breakpoint
CREATE UNIQUE INDEX "rollup_loads_current_idx" ON "rollup_loads" USING btree ("rollup_id") WHERE "rollup_loads"."superseded_at" is null;--> statement-breakpoint
CREATE INDEX "rollup_loads_superseded_idx" ON "rollup_loads" USING btree ("superseded_at") WHERE "rollup_loads"."superseded_at" is not null;