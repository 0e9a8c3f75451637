CREATE TABLE "object_rights" (
	"id" serial PRIMARY KEY NOT NULL,
	"object_type" text NOT NULL,
	"object_id" integer NOT NULL,
	"user_id" integer,
	"group_id" integer,
	"right" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "object_rights_subject_ck" CHECK (("object_rights"."user_id" is null) <> ("object_rights"."group_id" is null)),
	CONSTRAINT "object_rights_right_ck" CHECK ("object_rights"."right" in ('view', 'edit'))
);
--> statement-breakpoint
ALTER TABLE "object_rights" ADD CONSTRAINT "object_rights_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "object_rights" ADD CONSTRAINT "object_rights_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "object_rights_user_uq" ON "object_rights" USING btree ("object_type","object_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "object_rights_group_uq" ON "object_rights" USING btree ("object_type","object_id","group_id");--> statement-breakpoint
CREATE INDEX "object_rights_user_idx" ON "object_rights" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "object_rights_group_idx" ON "object_rights" USING btree ("group_id");