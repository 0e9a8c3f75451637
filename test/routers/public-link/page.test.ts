import { expect, it } from 'vitest';
import { useTestApp } from '../../support/app';

/* GET /s/{token} and /s/assets/{name}: the viewer page, served without authentication and outside the API document. */

const { api } = useTestApp();

it('the page is the same HTML for any token, with a strict CSP and no Referer; assets by name only', async () => {
  const res = await api.get(`/s/${'F'.repeat(43)}`);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(res.headers['content-security-policy']).toContain("script-src 'self'");
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.body).toContain('/s/assets/viewer.js');
  for (const name of ['viewer.js', 'viewer.css', 'charts.js', 'echarts.min.js']) {
    const asset = await api.get(`/s/assets/${name}`);
    expect(asset.status, name).toBe(200);
  }
  expect((await api.get('/s/assets/echarts.min.js')).body.length).toBeGreaterThan(500_000);
  for (const name of ['index.ts', '..%2F..%2Fpackage.json', '%00', 'constructor', '__proto__'])
    expect((await api.get(`/s/assets/${name}`)).status, name).toBe(404);
  const docs = (await api.get('/api/v3/api-docs')).body as { paths: Record<string, unknown> };
  expect(Object.keys(docs.paths).some((p) => p.startsWith('/s/'))).toBe(false);
  expect(docs.paths).toHaveProperty(['/api/public/link/{token}/unlock']);
});
