import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { AppDeps } from '../app/deps';
import type { HeldCopy, LocalCopies } from '../storage/local-copies';

/*
 * Where file sources live: in storage (STORAGE_URL), under files/<source uuid>/, the uploaded file as it came
 * (source-<import id>.<ext>) and the DuckDB database it was imported into (<import id>.duckdb), so that an upload
 * made on one node of a cluster is read on any other. Settings keep them as `storage:<key>` in file.duckdb_path and
 * upload.stored_file. Each import gets a new id, so a replace imports beside the old objects, switches the source
 * over in one transaction and deletes the old keys after the commit (objects are immutable).
 *
 * Sources uploaded before storage keep paths relative to DATA_DIR in the same fields: they are still read there (and
 * deleted there); a copy of such a source (pipelines, copies) moves its files into storage.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STORED = 'storage:';

const filesRoot = (deps: AppDeps) => path.join(deps.config.dataDir, 'files');

/** Uploads are streamed here first and imported here; the finished files then go to storage. */
export const stagingDir = (deps: AppDeps) => path.join(filesRoot(deps), '.incoming');

function checkUuid(uuid: string): string {
  // The uuid comes from our own database; checked anyway, since its prefix and folder are removed whole.
  if (!UUID.test(uuid)) throw new Error(`not a source uuid: ${uuid}`);
  return uuid;
}

/** The storage prefix of a source's objects. */
const sourcePrefix = (uuid: string) => `files/${checkUuid(uuid)}/`;

/** A source's folder in DATA_DIR from before storage. */
const legacyDir = (deps: AppDeps, uuid: string) => path.join(filesRoot(deps), checkUuid(uuid));

/** The storage key a settings path names, or undefined for an old path relative to DATA_DIR. */
const keyOf = (ref: string): string | undefined => (ref.startsWith(STORED) ? ref.slice(STORED.length) : undefined);

const legacyFile = (deps: AppDeps, ref: string) => (path.isAbsolute(ref) ? ref : path.join(deps.config.dataDir, ref));

export const newImportId = () => `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;

/** A folder of its own under staging for one import's work files (removed by the caller). */
export async function importWorkDir(deps: AppDeps, importId: string): Promise<string> {
  const dir = path.join(stagingDir(deps), `import-${importId}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Puts a finished local file in storage as files/<uuid>/<name>; answers the settings path (`storage:<key>`). */
export async function storeSourceFile(deps: AppDeps, uuid: string, name: string, file: string): Promise<string> {
  const key = `${sourcePrefix(uuid)}${name}`;
  await deps.storage.putFile(key, file);
  return `${STORED}${key}`;
}

/*
 * The local copies of file sources' DuckDB databases this node holds, per LocalCopies (one per app): a copy is held
 * from the first read of its key until the key is deleted here or the same source's newer import is held (a replace
 * made on another node), so DuckDB never sees its open file evicted.
 */
const heldCopies = new WeakMap<LocalCopies, Map<string, Promise<HeldCopy>>>();

function holdsOf(deps: AppDeps): Map<string, Promise<HeldCopy>> {
  let holds = heldCopies.get(deps.localCopies);
  if (!holds) heldCopies.set(deps.localCopies, (holds = new Map()));
  return holds;
}

function letGo(deps: AppDeps, keys: (key: string) => boolean): void {
  const holds = holdsOf(deps);
  for (const [key, held] of holds) {
    if (!keys(key)) continue;
    holds.delete(key);
    void held.then(
      (h) => {
        h.release();
        return deps.localCopies.forget(key);
      },
      () => undefined,
    );
  }
}

/**
 * The local file to open for a settings path: this node's copy of the stored object (downloaded on a miss, the
 * object itself on file://), or an old file under DATA_DIR. StorageNotFoundError when the object is gone.
 */
export async function localFileOf(deps: AppDeps, ref: string): Promise<string> {
  const key = keyOf(ref);
  if (!key) return legacyFile(deps, ref);
  const holds = holdsOf(deps);
  let held = holds.get(key);
  if (!held) {
    const prefix = key.slice(0, key.lastIndexOf('/') + 1);
    letGo(deps, (k) => k.startsWith(prefix) && k !== key);
    held = deps.localCopies.hold(key);
    holds.set(key, held);
    held.catch(() => holds.get(key) === held && holds.delete(key));
  }
  return (await held).file;
}

/** Removes everything of a source: its objects (and this node's copies) and a folder from before storage. */
export async function removeFileSourceFiles(deps: AppDeps, uuid: string): Promise<void> {
  const prefix = sourcePrefix(uuid);
  letGo(deps, (k) => k.startsWith(prefix));
  await deps.storage.deletePrefix(prefix).catch(() => undefined);
  // One node's disk (file://) keeps the emptied folder: removed too, as the source's folder always was.
  const folder = deps.storage.localPath(prefix.slice(0, -1));
  if (folder) await rm(folder, { recursive: true, force: true }).catch(() => undefined);
  await rm(legacyDir(deps, uuid), { recursive: true, force: true }).catch(() => undefined);
}

/** Removes single files left over by a replace; missing ones are fine. */
export async function removeFiles(deps: AppDeps, refs: (string | undefined)[]): Promise<void> {
  await Promise.all(
    refs
      .filter((p): p is string => !!p)
      .map(async (ref) => {
        const key = keyOf(ref);
        if (!key) return rm(legacyFile(deps, ref), { force: true }).catch(() => undefined);
        letGo(deps, (k) => k === key);
        await deps.storage.delete(key).catch(() => undefined);
      }),
  );
}

/** Copies one file of a source to the copy's prefix in storage (an old DATA_DIR file is stored there). */
async function copyOne(deps: AppDeps, ref: unknown, toUuid: string): Promise<unknown> {
  if (typeof ref !== 'string') return ref;
  const key = keyOf(ref);
  const name = path.basename(key ?? ref);
  if (!key) return storeSourceFile(deps, toUuid, name, legacyFile(deps, ref));
  const to = `${sourcePrefix(toUuid)}${name}`;
  await deps.storage.put(to, await deps.storage.get(key));
  return `${STORED}${to}`;
}

/** Copies a file source's files for a copy of the source and rewrites the paths in its settings. */
export async function copyFileSourceFiles(
  deps: AppDeps,
  fromUuid: string,
  toUuid: string,
  settings: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  checkUuid(fromUuid);
  const file = settings.file as { duckdb_path: string; tables: string[] } | undefined;
  const upload = settings.upload as Record<string, unknown> | undefined;
  return {
    ...settings,
    ...(file ? { file: { ...file, duckdb_path: await copyOne(deps, file.duckdb_path, toUuid) } } : {}),
    ...(upload ? { upload: { ...upload, stored_file: await copyOne(deps, upload.stored_file, toUuid) } } : {}),
  };
}
