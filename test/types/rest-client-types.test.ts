import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, type RawOperationDoc } from '../../adapters/rest/openapi';
import { rawOperationDocs } from '../../adapters/rest/raw-route';
import { appRouter } from '../../routers';
import { API_VERSION, rawRoutes } from '../../server/app/app';
import { clientProject, compileClient, reportedLines, root, run } from './client-project';

/*
 * The README's REST client: openapi-typescript turns the OpenAPI document into types, openapi-fetch calls with them.
 * The generated types must describe the envelope and the parameters well enough that a wrong call fails to compile.
 */

let dir: string;

const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './api';

const api = createClient<paths>({ baseUrl: 'http://127.0.0.1:8080', headers: { authorization: 'Bearer token' } });

export async function firstSource(): Promise<number | undefined> {
  const login = await api.POST('/api/auth/login', { body: { username: 'admin', password: 'secret' } });
  const token: string | undefined = login.data?.data.token;
  const failure: string | undefined = login.error?.error.message;
  const { data } = await api.GET('/api/data-source/{id}', { params: { path: { id: 7 } } });
  const list = await api.GET('/api/data-source', { params: { query: { page: 0, size: 20 } } });
  void token;
  void failure;
  return data?.data.id ?? list.data?.data.content[0]?.id;
}
`;

const WRONG = `
import createClient from 'openapi-fetch';
import type { paths } from './api';

const api = createClient<paths>({ baseUrl: 'http://127.0.0.1:8080' });

export async function wrong() {
  await api.GET('/api/data-source/{id}', { params: { path: { id: 'seven' } } });
  await api.GET('/api/no-such-path');
  await api.POST('/api/auth/login', { body: { username: 'admin' } });
  const n: number | undefined = (await api.GET('/api/users/me')).data?.data.username;
  return n;
}
`;
const WRONG_LINES = [8, 9, 10, 11];

beforeAll(async () => {
  dir = await clientProject('rest-client-types-', ['openapi-fetch', 'openapi-typescript-helpers']);
  const rawOperations: RawOperationDoc[] = rawOperationDocs(rawRoutes);
  await writeFile(
    path.join(dir, 'openapi.json'),
    JSON.stringify(buildOpenApiDocument(appRouter, { version: API_VERSION, rawOperations })),
  );
  await run(path.join(root, 'node_modules/.bin/openapi-typescript'), ['openapi.json', '-o', 'api.d.ts'], { cwd: dir });
  await writeFile(path.join(dir, 'client.ts'), CLIENT);
  await writeFile(path.join(dir, 'wrong.ts'), WRONG);
}, 60_000);
afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

describe('REST client types from the OpenAPI document (openapi-typescript + openapi-fetch)', () => {
  it('compiles calls that match the document, envelope included', async () => {
    const result = await compileClient(dir, ['client.ts']);
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  }, 30_000);

  it('rejects calls that do not', async () => {
    const result = await compileClient(dir, ['client.ts', 'wrong.ts']);
    expect(result.ok).toBe(false);
    expect(reportedLines(result.output, 'wrong.ts')).toEqual(WRONG_LINES);
  }, 30_000);
});
