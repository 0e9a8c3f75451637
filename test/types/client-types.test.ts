import { copyFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientProject, compileClient, reportedLines, root, run } from './client-project';

/*
 * A frontend that installs only @trpc/client (with its peer @trpc/server) and superjson compiles against the emitted
 * dist/types/app-router.d.ts; calls that do not match the procedures fail to compile, so the types are real.
 */

let dir: string;

const CLIENT = `
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import superjson from 'superjson';
import type { AppRouter } from './app-router';

export const client = createTRPCClient<AppRouter>({
  links: [httpBatchLink({ url: 'http://127.0.0.1:8080/trpc', transformer: superjson, headers: () => ({ authorization: 'Bearer token' }) })],
});

export async function firstSource(): Promise<{ token: string; id: number | undefined; total: number }> {
  const session = await client.auth.login.mutate({ username: 'admin', password: 'secret' });
  const sources = await client.dataSource.list.query({ page: 0, size: 20, createdAtFrom: '2026-01-01' });
  return { token: session.token, id: sources.content[0]?.id, total: sources.page.total_elements };
}
`;

// One mistake per line; each line number must be reported.
const WRONG = `
import { client } from './client';

export async function wrong() {
  await client.dataSource.get.query({ id: 'seven' });
  await client.dataSource.noSuchProcedure.query();
  const session = await client.auth.login.mutate({ username: 'admin' });
  const n: number = (await client.auth.login.mutate({ username: 'a', password: 'b' })).token;
  await client.widget.list.query({ size: '20' });
  return { session, n };
}
`;
const WRONG_LINES = [5, 6, 7, 8, 9];

beforeAll(async () => {
  await run(path.join(root, 'node_modules/.bin/tsx'), [path.join(root, 'scripts/build-types/build-types.ts')], {
    cwd: root,
  });
  dir = await clientProject('client-types-', ['@trpc/client', '@trpc/server', 'superjson']);
  await copyFile(path.join(root, 'dist/types/app-router.d.ts'), path.join(dir, 'app-router.d.ts'));
  await writeFile(path.join(dir, 'client.ts'), CLIENT);
  await writeFile(path.join(dir, 'wrong.ts'), WRONG);
}, 60_000);
afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

describe('dist/types/app-router.d.ts (npm run build:types)', () => {
  it('compiles a tRPC client with only @trpc/client, @trpc/server and superjson installed', async () => {
    const result = await compileClient(dir, ['client.ts']);
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  }, 30_000);

  it('rejects calls that do not match the procedures', async () => {
    const result = await compileClient(dir, ['client.ts', 'wrong.ts']);
    expect(result.ok).toBe(false);
    expect(reportedLines(result.output, 'wrong.ts')).toEqual(WRONG_LINES);
    expect(result.output).not.toMatch(/^(client|app-router\.d)\.ts/m);
  }, 30_000);
});
