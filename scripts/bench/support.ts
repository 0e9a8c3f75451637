import crypto from 'node:crypto';
import pg from 'pg';

/*
 * What every benchmark needs around the platform: a throwaway metadata database and a JSON call of the REST API.
 * The source tables differ per benchmark, so each keeps its own.
 */

/** DATABASE_URL when given, else a new database `<prefix>_<random>` on the source server, dropped by drop(). */
export async function metadataDatabase(
  sourceUrl: string,
  prefix: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, drop: async () => {} };
  const name = `${prefix}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: sourceUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(sourceUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: sourceUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A REST call answering the envelope's data; anything but 200 throws with the answer. */
export async function call(base: URL, method: string, pathname: string, body: unknown, token?: string) {
  const r = await fetch(new URL(pathname, base), {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await r.json()) as { data?: any };
  if (r.status !== 200) throw new Error(`${method} ${pathname}: ${r.status} ${JSON.stringify(json)}`);
  return json.data;
}
