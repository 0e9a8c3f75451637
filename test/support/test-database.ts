import crypto from 'node:crypto';
import pg from 'pg';

/** Clones the run's template database into a fresh one for a single test file. */
export async function cloneTemplateDatabase(templateUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const template = new URL(templateUrl);
  const templateName = decodeURIComponent(template.pathname.slice(1));
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const maintenance = new URL(templateUrl);
  maintenance.pathname = '/postgres';
  const run = async (sql: string) => {
    const c = new pg.Client({ connectionString: maintenance.toString() });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  // CREATE DATABASE ... TEMPLATE fails while another session is cloning the same template: retry briefly.
  for (let attempt = 0; ; attempt++) {
    try {
      await run(`create database ${name} template "${templateName.replace(/"/g, '""')}"`);
      break;
    } catch (e) {
      if (attempt >= 50 || !/being accessed by other users/.test(String(e))) throw e;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  const url = new URL(templateUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}
