CREATE TABLE "mail_channels" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"host" text NOT NULL,
	"port" integer NOT NULL,
	"security" text DEFAULT 'starttls' NOT NULL,
	"username" text DEFAULT '' NOT NULL,
	"password_box" text,
	"from_address" text NOT NULL,
	"from_name" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mail_channels_security_ck" CHECK ("mail_channels"."security" in ('none', 'starttls', 'ssl'))
);
--> statement-breakpoint
CREATE TABLE "mailing_letters" (
	"id" serial PRIMARY KEY NOT NULL,
	"run_id" integer NOT NULL,
	"recipient" text NOT NULL,
	"slice_value" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"sent_at" timestamp with time zone,
	CONSTRAINT "mailing_letters_status_ck" CHECK ("mailing_letters"."status" in ('pending', 'sending', 'sent', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "mailing_runs" (
	"id" serial PRIMARY KEY NOT NULL,
	"mailing_id" integer NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"trigger" text DEFAULT 'manual' NOT NULL,
	"letters_sent" integer DEFAULT 0 NOT NULL,
	"letters_failed" integer DEFAULT 0 NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	CONSTRAINT "mailing_runs_state_ck" CHECK ("mailing_runs"."state" in ('queued', 'running', 'succeeded', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "mailings" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"workspace_id" integer NOT NULL,
	"author_id" integer,
	"dashboard_id" integer,
	"widget_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"format" text NOT NULL,
	"schedule" text,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"channel_id" integer NOT NULL,
	"recipients" jsonb DEFAULT '{"user_ids":[],"group_ids":[],"emails":[]}'::jsonb NOT NULL,
	"subject" text DEFAULT '' NOT NULL,
	"body" text DEFAULT '' NOT NULL,
	"slice" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mailings_status_ck" CHECK ("mailings"."status" in ('active', 'paused')),
	CONSTRAINT "mailings_format_ck" CHECK ("mailings"."format" in ('pdf', 'png', 'xlsx', 'csv', 'inline'))
);
--> statement-breakpoint
ALTER TABLE "mailing_letters" ADD CONSTRAINT "mailing_letters_run_id_mailing_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."mailing_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mailing_runs" ADD CONSTRAINT "mailing_runs_mailing_id_mailings_id_fk" FOREIGN KEY ("mailing_id") REFERENCES "public"."mailings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mailings" ADD CONSTRAINT "mailings_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mailings" ADD CONSTRAINT "mailings_author_id_users_id_fk" FOREIGN KEY ("author_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mailings" ADD CONSTRAINT "mailings_dashboard_id_dashboards_id_fk" FOREIGN KEY ("dashboard_id") REFERENCES "public"."dashboards"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mailings" ADD CONSTRAINT "mailings_channel_id_mail_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."mail_channels"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mailing_letters_key_idx" ON "mailing_letters" USING btree ("run_id","recipient","slice_value");--> statement-breakpoint
CREATE INDEX "mailing_runs_mailing_idx" ON "mailing_runs" USING btree ("mailing_id","id");--> statement-breakpoint
CREATE INDEX "mailings_workspace_idx" ON "mailings" USING btree ("workspace_id");--> statement-breakpoint
CREATE INDEX "mailings_channel_idx" ON "mailings" USING btree ("channel_id");