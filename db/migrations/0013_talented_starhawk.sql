ALTER TABLE "sso_login_codes" ADD COLUMN "browser_hash" text;--> statement-breakpoint
ALTER TABLE "sso_login_states" ADD COLUMN "browser_hash" text;