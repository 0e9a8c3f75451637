CREATE TABLE "object_revisions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"object_type" text NOT NULL,
	"object_id" integer NOT NULL,
	"rev" integer NOT NULL,
	"change" text NOT NULL,
	"author_id" integer,
	"deployment_id" integer,
	"snapshot" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "object_revisions" ADD CONSTRAINT "object_revisions_author_id_users_id_fk" FOREIGN KEY ("author_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "object_revisions_object_rev_uq" ON "object_revisions" USING btree ("object_type","object_id","rev");--> statement-breakpoint
CREATE INDEX "object_revisions_deployment_idx" ON "object_revisions" USING btree ("deployment_id");