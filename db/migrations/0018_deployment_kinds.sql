ALTER TABLE "pipeline_deployments" ADD COLUMN "kind" text DEFAULT 'deploy' NOT NULL;--> statement-breakpoint
ALTER TABLE "pipeline_deployments" ADD COLUMN "rolled_back_id" integer;--> statement-breakpoint
ALTER TABLE "pipeline_deployments" ADD CONSTRAINT "pipeline_deployments_rolled_back_id_pipeline_deployments_id_fk" FOREIGN KEY ("rolled_back_id") REFERENCES "public"."pipeline_deployments"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_deployments_rolled_back_uq" ON "pipeline_deployments" USING btree ("rolled_back_id");--> statement-breakpoint
ALTER TABLE "pipeline_deployments" ADD CONSTRAINT "pipeline_deployments_kind_ck" CHECK ("pipeline_deployments"."kind" in ('deploy', 'rollback'));