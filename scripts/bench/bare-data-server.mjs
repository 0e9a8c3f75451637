/**
 * bench:load's baseline for widget data: what a user would run instead of the platform, a bare fastify route that
 * takes the same JSON body, sends the widget's compiled SQL with the body's selector value through a pg pool of the
 * connector's size, and answers the rows as JSON. No project code, no authentication, no cache. load.ts starts it with
 * the server's node flags and reads "ready" on stdout.
 *
 * With READ_ONLY=1 the SQL goes as the PostgreSQL connector sends a bounded read of a text it cannot vouch for (a
 * dataset with SQL objects; adapters/sources/postgresql): BEGIN READ ONLY with the statement timeout, the SELECT,
 * ROLLBACK, three statements corked into one write on one pooled connection.
 *
 *   env: SOURCE_PG_URL, SQL, PARAMS (JSON array), VALUE_INDEX (which parameter is the selector's value), POOL_SIZE,
 *        READ_ONLY, PORT
 */
import Fastify from 'fastify';
import pg from 'pg';

const env = process.env;
const params = JSON.parse(env.PARAMS ?? '[]');
const valueIndex = Number(env.VALUE_INDEX);
// READ_ONLY: pg's pipeline mode, as the connector's pool has it; without it pg sends each of the three statements only
// after the previous one's answer (three round trips, and pg's deprecation warning for the queued calls).
const pool = new pg.Pool({
  connectionString: env.SOURCE_PG_URL,
  max: Number(env.POOL_SIZE ?? 5),
  pipeline: Boolean(env.READ_ONLY),
});
const app = Fastify();

app.post('/data', async (req) => {
  const values = params.slice();
  values[valueIndex] = req.body.filters[0].values[0];
  const res = env.READ_ONLY ? await readOnly(values) : await pool.query({ text: env.SQL, values, rowMode: 'array' });
  return { columns: res.fields.map((f) => f.name), rows: res.rows };
});

async function readOnly(values) {
  const client = await pool.connect();
  try {
    client.connection.stream.cork();
    const sent = [
      client.query('BEGIN READ ONLY; SET LOCAL statement_timeout = 30000'),
      client.query({ text: env.SQL, values, rowMode: 'array' }),
      client.query('ROLLBACK'),
    ];
    client.connection.stream.uncork();
    return (await Promise.all(sent))[1];
  } finally {
    client.release();
  }
}

await app.listen({ port: Number(env.PORT), host: '127.0.0.1' });
console.log('ready');
process.on('SIGTERM', () => void app.close().then(() => pool.end()));
