import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RawScope } from '../../adapters/rest/raw-route';
import { stagingDir } from '../../server/data-sources/file-storage';
import type { UploadedFile } from '../../server/data-sources/files';
import type { AppDeps } from '../../server/app/deps';
import { AppError, invalid } from '../../server/kernel/errors';
import { entityIdText, nonBlank, wireString } from '../common';

/*
 * Receiving a multipart upload for POST /api/files and PUT /api/files/{id} (raw.ts): the file part is streamed to
 * the staging folder, never held in memory; parser failures become the envelope's 400/413/415 in Russian.
 */

const booleanText = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], { error: 'must be true or false' })
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const NAMED_DELIMITERS: Record<string, string> = { tab: '\t', '\\t': '\t', semicolon: ';', comma: ',', pipe: '|' };

const importFields = {
  sheet: wireString().trim().min(1).max(255).optional(),
  has_header: booleanText.optional(),
  delimiter: wireString()
    .min(1)
    .max(10)
    .transform((d) => NAMED_DELIMITERS[d.toLowerCase()] ?? d)
    .pipe(z.string().max(4, { error: 'must be 1 to 4 characters' }))
    .optional(),
};
export const uploadFields = z.strictObject({
  name: nonBlank(200).optional(),
  workspace_id: entityIdText().optional(),
  ...importFields,
});
export const replaceFields = z.strictObject(importFields);
export const idParam = z.strictObject({ id: entityIdText() });

export interface Received {
  file?: UploadedFile;
  fields: Record<string, string>;
}

function sizeText(bytes: number): string {
  const round = (n: number) => String(Math.round(n * 10) / 10).replace('.', ',');
  if (bytes >= 1024 ** 3) return `${round(bytes / 1024 ** 3)} ГБ`;
  if (bytes >= 1024 ** 2) return `${round(bytes / 1024 ** 2)} МБ`;
  return `${round(bytes / 1024)} КБ`;
}

/** Multipart parser failures in the envelope's words: too large is 413, a malformed body 400. */
function multipartError(err: unknown, deps: AppDeps): unknown {
  const e = err as { code?: string; statusCode?: number; message?: string };
  if (e?.code === 'FST_REQ_FILE_TOO_LARGE') {
    return new AppError(
      'payload_too_large',
      `Файл больше допустимого размера ${sizeText(deps.config.uploadLimitBytes)}`,
    );
  }
  if (e?.code === 'FST_FILES_LIMIT')
    return new AppError('payload_too_large', 'Можно загрузить только один файл за раз');
  if (e?.code === 'FST_FIELDS_LIMIT' || e?.code === 'FST_PARTS_LIMIT')
    return new AppError('payload_too_large', 'Слишком много полей в запросе');
  if (e?.code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return notMultipart();
  if (err instanceof AppError) return err;
  if (e?.code?.startsWith('FST_') || /multipart|boundary|unexpected end/i.test(e?.message ?? '')) {
    return new AppError(
      'bad_request',
      `Некорректное тело multipart/form-data: ${e?.message ?? 'не удалось разобрать'}`,
    );
  }
  return err;
}

const notMultipart = () =>
  new AppError('unsupported_media_type', 'Ожидается тело multipart/form-data с файлом в поле file');

/** Streams the one `file` part to the staging folder and collects the text fields. */
async function receive(req: FastifyRequest, deps: AppDeps): Promise<Received> {
  if (!req.isMultipart()) throw notMultipart();
  const received: Received = { fields: {} };
  const unknownFiles: string[] = [];
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          unknownFiles.push(part.fieldname);
          part.file.resume();
          continue;
        }
        const dir = stagingDir(deps);
        await mkdir(dir, { recursive: true });
        const staged = path.join(dir, randomUUID());
        received.file = { path: staged, filename: part.filename || 'upload', size: 0 };
        await pipeline(part.file, createWriteStream(staged));
        received.file.size = (await stat(staged)).size;
      } else {
        received.fields[part.fieldname] = String(part.value ?? '');
      }
    }
  } catch (err) {
    if (received.file) await rm(received.file.path, { force: true });
    throw multipartError(err, deps);
  }
  if (unknownFiles.length) {
    if (received.file) await rm(received.file.path, { force: true });
    throw invalid(Object.fromEntries(unknownFiles.map((f) => [f, 'unknown field: the file goes in the field "file"'])));
  }
  return received;
}

export function requireFile(received: Received): UploadedFile {
  if (!received.file) throw invalid({ file: 'must not be null' }, 'Не передан файл: ожидается поле file');
  return received.file;
}

/** The one scope where @fastify/multipart is registered, with the installation's upload limit. */
export const multipartScope: RawScope<AppDeps> = {
  async setup(scope, deps) {
    await scope.register(multipart, {
      limits: {
        fileSize: deps.config.uploadLimitBytes,
        files: 1,
        fields: 20,
        fieldSize: 64 * 1024,
        parts: 30,
        headerPairs: 200,
      },
      throwFileSizeLimit: true,
    });
  },
};

/** Runs `work` on the received upload; the staged file is removed whatever happens. */
export async function withUpload<T>(
  req: FastifyRequest,
  deps: AppDeps,
  work: (received: Received) => Promise<T>,
): Promise<T> {
  const received = await receive(req, deps);
  try {
    return await work(received);
  } finally {
    if (received.file) await rm(received.file.path, { force: true });
  }
}
