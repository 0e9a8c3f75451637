import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazySchemaCompilers } from '../../../server/app/schema-compilers';

/*
 * Fastify's JSON Schema compilers load on first use (server/app/schema-compilers.ts): a route that declares a schema
 * still has its body validated and its answer serialised by them, as with fastify's defaults.
 */

describe('lazySchemaCompilers', () => {
  it('validates a body and serialises an answer by the route schema', async () => {
    const app = Fastify({ schemaController: lazySchemaCompilers() });
    app.post(
      '/x',
      {
        schema: {
          body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
          response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } },
        },
      },
      async (req) => ({ n: (req.body as { n: number }).n, extra: 'not in the schema' }),
    );
    try {
      const good = await app.inject({ method: 'POST', url: '/x', payload: { n: 2 } });
      expect(good.statusCode).toBe(200);
      expect(good.json<{ n: number }>()).toEqual({ n: 2 });
      const bad = await app.inject({ method: 'POST', url: '/x', payload: { n: 'two' } });
      expect(bad.statusCode).toBe(400);
    } finally {
      await app.close();
    }
  });
});
