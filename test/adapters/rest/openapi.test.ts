import SwaggerParser from '@apidevtools/swagger-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { appRouter } from '../../../routers';

const { t } = useTestApp();
let doc: any;

beforeAll(async () => {
  const res = await t.app.inject({ method: 'GET', url: '/api/v3/api-docs' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});

describe('GET /api/v3/api-docs', () => {
  it('is a valid OpenAPI 3 document', async () => {
    expect(doc.openapi).toMatch(/^3\./);
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('lists every REST procedure at its exact method and path', () => {
    const procedures = Object.values(appRouter._def.procedures as Record<string, any>)
      .map((p) => p._def.meta?.openapi)
      .filter(Boolean);
    expect(procedures.length).toBeGreaterThan(0);
    for (const o of procedures) {
      expect(doc.paths[o.path]?.[o.method.toLowerCase()], `${o.method} ${o.path}`).toBeDefined();
    }
    for (const [path, method] of [
      ['/api/auth/login', 'post'],
      ['/api/auth/refresh', 'post'],
      ['/api/auth/logout', 'post'],
      ['/api/mcp-tokens', 'get'],
      ['/api/mcp-tokens', 'post'],
      ['/api/mcp-tokens/{id}', 'delete'],
      ['/api/mcp-tokens/{id}/suspend', 'post'],
      ['/api/mcp-tokens/{id}/activate', 'post'],
      ['/api/mcp-tokens/settings', 'get'],
      ['/api/mcp-tokens/settings', 'put'],
      ['/api/settings', 'get'],
      ['/api/settings', 'put'],
      ['/api/dictionary', 'get'],
    ]) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
  });

  it('wraps responses in the envelope and declares bearer security', () => {
    const login = doc.paths['/api/auth/login'].post;
    const ok = login.responses['200'].content['application/json'].schema;
    expect(ok.properties.success).toEqual({ type: 'boolean', enum: [true] });
    expect(ok.properties.data.properties.token).toBeDefined();
    expect(login.responses['422'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorEnvelope');
    expect(login.security).toEqual([]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/settings'].put.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/api/settings'].put.responses['401']).toBeDefined();
  });

  it('serves a human docs page outside /api', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/swagger/i);
  });
});
