import { randomBytes } from 'node:crypto';
import { cp, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { AppDeps } from '../app/deps';

/*
 * Where file sources live: DATA_DIR/files/<source uuid>/ holds the uploaded file as it came and the DuckDB database
 * it was imported into. Settings keep both paths relative to DATA_DIR (connection.ts resolves them), so that a
 * moved data directory keeps working. Each upload gets new file names, so a replace can import beside the old
 * files and switch the source over in one transaction.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const filesRoot = (deps: AppDeps) => path.join(deps.config.dataDir, 'files');

/** Uploads are streamed here first (same file system as the source folders, so moving them is a rename). */
export const stagingDir = (deps: AppDeps) => path.join(filesRoot(deps), '.incoming');

export function sourceDir(deps: AppDeps, uuid: string): string {
  // The uuid comes from our own database; checked anyway, since the path is removed recursively.
  if (!UUID.test(uuid)) throw new Error(`not a source uuid: ${uuid}`);
  return path.join(filesRoot(deps), uuid);
}

export const toRelative = (deps: AppDeps, absolute: string) => path.relative(deps.config.dataDir, absolute);
export const toAbsolute = (deps: AppDeps, relative: string) =>
  path.isAbsolute(relative) ? relative : path.join(deps.config.dataDir, relative);

export const uniqueSuffix = () => `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;

export async function ensureSourceDir(deps: AppDeps, uuid: string): Promise<string> {
  const dir = sourceDir(deps, uuid);
  await mkdir(dir, { recursive: true });
  return dir;
}

export async function removeFileSourceFiles(deps: AppDeps, uuid: string): Promise<void> {
  await rm(sourceDir(deps, uuid), { recursive: true, force: true }).catch(() => undefined);
}

/** Removes single files left over by a replace; missing ones are fine. */
export async function removeFiles(deps: AppDeps, relativePaths: (string | undefined)[]): Promise<void> {
  await Promise.all(
    relativePaths
      .filter((p): p is string => !!p)
      .map((p) => rm(toAbsolute(deps, p), { force: true }).catch(() => undefined)),
  );
}

/** Copies a file source's folder for a copy of the source and rewrites the paths in its settings. */
export async function copyFileSourceFiles(
  deps: AppDeps,
  fromUuid: string,
  toUuid: string,
  settings: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const from = sourceDir(deps, fromUuid);
  const to = sourceDir(deps, toUuid);
  await cp(from, to, { recursive: true, errorOnExist: true, force: false });
  const move = (p: unknown) =>
    typeof p === 'string' ? toRelative(deps, path.join(to, path.relative(from, toAbsolute(deps, p)))) : p;
  const file = settings.file as { duckdb_path: string; tables: string[] } | undefined;
  const upload = settings.upload as Record<string, unknown> | undefined;
  return {
    ...settings,
    ...(file ? { file: { ...file, duckdb_path: move(file.duckdb_path) } } : {}),
    ...(upload ? { upload: { ...upload, stored_file: move(upload.stored_file) } } : {}),
  };
}
