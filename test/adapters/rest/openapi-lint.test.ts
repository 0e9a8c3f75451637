import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, type RawOperationDoc } from '../../../adapters/rest/openapi';
import { rawOperationDocs } from '../../../adapters/rest/raw-route';
import { OPERATION_DESCRIPTIONS } from '../../../adapters/rest/openapi-descriptions';
import { documentGaps, type Operation } from '../../../adapters/rest/openapi-finish';
import { PARAMETER_OVERRIDES } from '../../../adapters/rest/openapi-parameters';
import { appRouter } from '../../../routers';
import { API_VERSION, rawRoutes } from '../../../server/app/app';

const run = promisify(execFile);
const bin = (name: string) => path.resolve('node_modules/.bin', name);
const rawOperations: RawOperationDoc[] = rawOperationDocs(rawRoutes);
const build = () => buildOpenApiDocument(appRouter, { version: API_VERSION, rawOperations });
const op = (doc: OpenAPIObject, method: string, p: string) => (doc.paths?.[p] as Record<string, Operation>)[method]!;
const errorCodes = (o: Operation) => Object.keys(o.responses ?? {}).filter((c) => /^[45]/.test(c));

let doc: OpenAPIObject;
let dir: string;
let file: string;

beforeAll(async () => {
  doc = build();
  dir = await mkdtemp(path.join(os.tmpdir(), 'openapi-lint-'));
  file = path.join(dir, 'openapi.json');
  await writeFile(file, JSON.stringify(doc));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the OpenAPI document (as npm run openapi:dump writes it)', () => {
  it('leaves nothing undescribed: summary, description, tag, security on every operation, a description on every parameter', () => {
    expect(documentGaps(doc)).toEqual([]);
  });

  it('has no description or parameter override for an operation that does not exist (a mistyped key would never apply)', () => {
    const keys = new Set(
      Object.entries(doc.paths ?? {}).flatMap(([p, item]) =>
        Object.keys(item as object).map((m) => `${m.toUpperCase()} ${p}`),
      ),
    );
    expect(
      [...Object.keys(OPERATION_DESCRIPTIONS), ...Object.keys(PARAMETER_OVERRIDES)].filter((k) => !keys.has(k)),
    ).toEqual([]);
  });

  it('names a gap when a rule cannot fill one in', () => {
    const broken = structuredClone(doc);
    const list = op(broken, 'get', '/api/data-source');
    delete list.description;
    delete list.parameters!.find((p) => p.name === 'page')!.description;
    list.tags = ['No such group'];
    expect(documentGaps(broken)).toEqual([
      'GET /api/data-source: no description',
      'GET /api/data-source: tag "No such group" has no root tag (openapi-tags.ts)',
      'GET /api/data-source: parameter query page has no description',
    ]);
  });

  it('names what a newly added raw route leaves out', () => {
    const extra: RawOperationDoc = {
      method: 'get',
      path: '/api/exports/{archiveId}/file',
      operation: {
        summary: 'Download',
        tags: ['File export'],
        parameters: [{ name: 'archiveId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': { description: 'The file' } },
      },
    };
    const withExtra = buildOpenApiDocument(appRouter, {
      version: API_VERSION,
      rawOperations: [...rawOperations, extra],
    });
    expect(documentGaps(withExtra)).toEqual([
      'GET /api/exports/{archiveId}/file: no description',
      'GET /api/exports/{archiveId}/file: security not declared',
      'GET /api/exports/{archiveId}/file: parameter path archiveId has no description',
    ]);
    expect(op(withExtra, 'get', '/api/exports/{archiveId}/file').tags).toEqual(['Экспорт в файл']);
  });

  it('derives security and the error statuses from what each operation is', () => {
    const login = op(doc, 'post', '/api/auth/login');
    expect(login.security).toEqual([]);
    expect(errorCodes(login)).toEqual(['400', '401', '413', '415', '422', '429', '500']);
    expect(op(doc, 'post', '/api/auth/refresh').security).toEqual([]);
    expect(errorCodes(op(doc, 'post', '/api/auth/refresh'))).not.toContain('403');
    // Authenticated read by id: 401, 404, and 403 (an API token is held to the token switch on every call).
    const get = op(doc, 'get', '/api/data-source/{id}');
    expect(get.security).toEqual([{ bearerAuth: [] }]);
    expect(errorCodes(get)).toEqual(['400', '401', '403', '404', '422', '500']);
    expect(errorCodes(op(doc, 'get', '/api/users/me'))).toEqual(['400', '401', '403', '500']);
    // A write whose body names objects (workspace_id, data_source_ids) answers 404 for one that is not there.
    expect(errorCodes(op(doc, 'post', '/api/dataset'))).toEqual([
      '400',
      '401',
      '403',
      '404',
      '413',
      '415',
      '422',
      '500',
    ]);
    // A POST without input still has a body parsed: too large or not JSON.
    expect(errorCodes(op(doc, 'post', '/api/auth/logout'))).toEqual(['400', '401', '403', '413', '415', '500']);
    // The share-link paths are rate limited and refuse a suspended link (403); past the link's state, a password
    // link wants its grant (401). The password change is under the login throttle.
    expect(errorCodes(op(doc, 'get', '/api/public/link/{token}'))).toEqual(['400', '403', '404', '422', '429', '500']);
    expect(errorCodes(op(doc, 'get', '/api/public/link/{token}/dashboard'))).toEqual([
      '400',
      '401',
      '403',
      '404',
      '422',
      '429',
      '500',
    ]);
    expect(errorCodes(op(doc, 'post', '/api/auth/sso/exchange'))).toContain('401');
    expect(errorCodes(op(doc, 'put', '/api/users/me/password'))).toContain('429');
    for (const [p, item] of Object.entries(doc.paths ?? {})) {
      for (const [m, o] of Object.entries(item as Record<string, Operation>)) {
        if (o['x-envelope'] === false) continue;
        for (const code of errorCodes(o)) {
          expect(o.responses![code]!.content!['application/json']!.schema, `${m} ${p} ${code}`).toEqual({
            $ref: '#/components/schemas/ErrorEnvelope',
          });
        }
      }
    }
  });

  it('describes POST /mcp as JSON-RPC 2.0, not the envelope', () => {
    const mcp = op(doc, 'post', '/mcp');
    expect(mcp['x-envelope']).toBe(false);
    const success = mcp.responses!['200']!.content!['application/json']!.schema as { anyOf: { required: string[] }[] };
    expect(success.anyOf[0].required).toEqual(['jsonrpc', 'id']);
    expect(JSON.stringify(mcp.responses!['200'])).not.toContain('"success"');
    expect(Object.keys(mcp.responses!)).toEqual(['200', '202', '400', '401', '403', '406', '413', '415', '500']);
    // 400: the envelope (a body that is no JSON) or the transport's JSON-RPC error; 406 only the latter.
    const badRequest = mcp.responses!['400']!.content!['application/json']!.schema as { anyOf: unknown[] };
    expect(badRequest.anyOf[0]).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    expect(JSON.stringify(mcp.responses!['406'])).toContain('"jsonrpc"');
    expect(mcp.responses!['401']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/ErrorEnvelope',
    });
  });

  it('gives the export download the media types it sends', () => {
    expect(Object.keys(op(doc, 'get', '/api/exports/{jobId}/file').responses!['200']!.content!)).toEqual([
      'text/csv',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/pdf',
      'image/png',
    ]);
  });

  it('keeps the components it uses only, tags in Russian, timestamps as date-time, inclusive integer bounds', () => {
    expect(Object.keys(doc.components?.schemas ?? {})).toEqual(['ErrorEnvelope']);
    expect(doc.tags?.find((t) => t['x-catalogue-group'] === 'Sources')).toMatchObject({
      name: 'Источники',
      description: expect.any(String),
    });
    expect(op(doc, 'get', '/api/data-source').tags).toEqual(['Источники']);
    const text = JSON.stringify(doc);
    expect(text).not.toContain('exclusiveMinimum');
    expect(text).not.toMatch(/"[a-z_]+_at":\{"type":"string"\}/);
    const id = op(doc, 'get', '/api/data-source/{id}').parameters![0]!;
    expect(id).toMatchObject({ name: 'id', description: 'Data source id', schema: { type: 'integer', minimum: 1 } });
    const from = op(doc, 'get', '/api/data-source').parameters!.find((p) => p.name === 'createdAtFrom')!;
    expect(from.schema).toMatchObject({ type: 'string', format: 'date-time' });
    expect(doc.info.license?.name).toBeTruthy();
    expect(doc.info.contact).toBeDefined();
  });

  it('passes redocly (recommended, warnings as errors) and spectral (spectral:oas, fail on warn)', async () => {
    await expect(run(bin('redocly'), ['lint', '--config', 'redocly.yaml', file])).resolves.toBeDefined();
    await expect(
      run(bin('spectral'), ['lint', '--ruleset', '.spectral.yaml', '--fail-severity=warn', file]),
    ).resolves.toBeDefined();
  }, 30_000);

  it('the linters do fail on a problem', async () => {
    const broken = structuredClone(doc);
    delete broken.info.license;
    delete broken.info.contact;
    const brokenFile = path.join(dir, 'broken.json');
    await writeFile(brokenFile, JSON.stringify(broken));
    await expect(run(bin('redocly'), ['lint', '--config', 'redocly.yaml', brokenFile])).rejects.toMatchObject({
      code: 1,
    });
    await expect(
      run(bin('spectral'), ['lint', '--ruleset', '.spectral.yaml', '--fail-severity=warn', brokenFile]),
    ).rejects.toMatchObject({ code: 1 });
  }, 30_000);
});
