/**
 * bench:load's baseline for widget data: what a user would run instead of the platform, a bare fastify route that
 * takes the same JSON body, sends the widget's compiled SQL with the body's selector value through a pg pool of the
 * connector's size, and answers the rows as JSON. No project code, no authentication, no cache. load.ts starts it with
 * the server's node flags and reads "ready" on stdout.
 *
 *   env: SOURCE_PG_URL, SQL, PARAMS (JSON array), VALUE_INDEX (which parameter is the selector's value), POOL_SIZE,
 *        PORT
 */
import Fastify from 'fastify';
import pg from 'pg';

const env = process.env;
const params = JSON.parse(env.PARAMS ?? '[]');
const valueIndex = Number(env.VALUE_INDEX);
const pool = new pg.Pool({ connectionString: env.SOURCE_PG_URL, max: Number(env.POOL_SIZE ?? 5) });
const app = Fastify();

app.post('/data', async (req) => {
  const values = params.slice();
  values[valueIndex] = req.body.filters[0].values[0];
  const res = await pool.query({ text: env.SQL, values, rowMode: 'array' });
  return { columns: res.fields.map((f) => f.name), rows: res.rows };
});

await app.listen({ port: Number(env.PORT), host: '127.0.0.1' });
console.log('ready');
process.on('SIGTERM', () => void app.close().then(() => pool.end()));
