CREATE TABLE "pipeline_deployments" (
	"id" serial PRIMARY KEY NOT NULL,
	"pipeline_id" integer NOT NULL,
	"from_stage" smallint NOT NULL,
	"user_id" integer,
	"objects" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"warnings" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_object_links" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"pipeline_id" integer NOT NULL,
	"from_order" smallint NOT NULL,
	"object_type" text NOT NULL,
	"original_id" integer NOT NULL,
	"copy_id" integer NOT NULL,
	"original_updated_at" timestamp with time zone NOT NULL,
	"deployed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pipeline_object_links_from_ck" CHECK ("pipeline_object_links"."from_order" between 0 and 1),
	CONSTRAINT "pipeline_object_links_type_ck" CHECK ("pipeline_object_links"."object_type" in ('data_source', 'dataset', 'widget', 'dashboard'))
);
--> statement-breakpoint
CREATE TABLE "pipeline_source_rules" (
	"id" serial PRIMARY KEY NOT NULL,
	"pipeline_id" integer NOT NULL,
	"stage_order" smallint NOT NULL,
	"source_uuid" uuid NOT NULL,
	"type" text NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"secrets" text,
	"author_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pipeline_source_rules_stage_ck" CHECK ("pipeline_source_rules"."stage_order" between 1 and 2)
);
--> statement-breakpoint
CREATE TABLE "pipeline_stages" (
	"id" serial PRIMARY KEY NOT NULL,
	"pipeline_id" integer NOT NULL,
	"order" smallint NOT NULL,
	"workspace_id" integer,
	"bound_by" integer,
	"bound_at" timestamp with time zone,
	CONSTRAINT "pipeline_stages_order_ck" CHECK ("pipeline_stages"."order" between 0 and 2)
);
--> statement-breakpoint
CREATE TABLE "pipelines" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"author_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "pipeline_deployments" ADD CONSTRAINT "pipeline_deployments_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_deployments" ADD CONSTRAINT "pipeline_deployments_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_object_links" ADD CONSTRAINT "pipeline_object_links_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_source_rules" ADD CONSTRAINT "pipeline_source_rules_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_source_rules" ADD CONSTRAINT "pipeline_source_rules_author_id_users_id_fk" FOREIGN KEY ("author_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_stages" ADD CONSTRAINT "pipeline_stages_pipeline_id_pipelines_id_fk" FOREIGN KEY ("pipeline_id") REFERENCES "public"."pipelines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_stages" ADD CONSTRAINT "pipeline_stages_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_stages" ADD CONSTRAINT "pipeline_stages_bound_by_users_id_fk" FOREIGN KEY ("bound_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_author_id_users_id_fk" FOREIGN KEY ("author_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "pipeline_deployments_pipeline_idx" ON "pipeline_deployments" USING btree ("pipeline_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_object_links_original_uq" ON "pipeline_object_links" USING btree ("pipeline_id","from_order","object_type","original_id");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_object_links_copy_uq" ON "pipeline_object_links" USING btree ("pipeline_id","from_order","object_type","copy_id");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_source_rules_uq" ON "pipeline_source_rules" USING btree ("pipeline_id","stage_order","source_uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_stages_order_uq" ON "pipeline_stages" USING btree ("pipeline_id","order");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_stages_workspace_uq" ON "pipeline_stages" USING btree ("workspace_id");