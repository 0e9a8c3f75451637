import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { failure } from '../../support/rest';

/*
 * The docs page (/docs, Swagger UI) is set up on its first request (server/app/docs.ts): its pages and assets are the
 * plugins' own answers, and a path under /docs it does not know answers the app's 404 envelope.
 */

const { t } = useTestApp();

describe('/docs', () => {
  it('serves the page, its assets and the document it shows; an unknown path is a 404 envelope', async () => {
    const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
    const page = await get('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toMatch(/swagger/i);
    const bare = await get('/docs');
    expect(bare.statusCode).toBe(200);
    const css = await get('/docs/static/swagger-ui.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/text\/css/);
    expect(Number(css.headers['content-length'])).toBe(css.rawPayload.length);
    const etag = String(css.headers.etag);
    expect((await get('/docs/static/swagger-ui.css', { 'if-none-match': etag })).statusCode).toBe(304);
    const json = await get('/docs/json');
    expect(json.statusCode).toBe(200);
    expect(json.json<{ openapi: string }>().openapi).toMatch(/^3\./);
    const missing = await get('/docs/no-such-page');
    expect(missing.statusCode).toBe(404);
    expect(failure({ status: missing.statusCode, body: missing.json(), headers: missing.headers }).code).toBe(404);
  });
});
