/**
 * File upload end to end, through the real HTTP stack: a generated CSV of ROWS rows (default 1 000 000) goes through
 * POST /api/files (multipart, streamed to disk, imported into DuckDB with type detection over the whole file),
 * then POST /api/data-source/{id}/preview reads it back. Prints the upload time, rows/s and the preview time.
 *
 *   npm run bench:upload            (ROWS=200000 to change the size; DATABASE_URL to use an external PostgreSQL)
 */
import { once } from 'node:events';
import { createWriteStream, openAsBlob } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../server/app/app';
import { loadConfig } from '../../server/app/config';
import { startRuntime } from '../../server/app/start';

const rows = Number(process.env.ROWS ?? 1_000_000);

async function writeCsv(file: string): Promise<void> {
  const out = createWriteStream(file);
  const put = async (s: string) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  await put('id,город,сумма,дата,время,оплачен\n');
  let batch = '';
  for (let i = 0; i < rows; i++) {
    const day = String((i % 28) + 1).padStart(2, '0');
    batch += `${i},Город ${i % 500},${(i % 100000) / 100},2024-03-${day},2024-03-${day} ${String(i % 24).padStart(2, '0')}:15:00,${i % 3 === 0}\n`;
    if (batch.length > 1 << 16) {
      await put(batch);
      batch = '';
    }
  }
  await put(batch);
  await new Promise<void>((resolve) => out.end(resolve));
}

async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-upload-'));
  const password = 'Bench-admin-2026';
  const runtime = await startRuntime(
    loadConfig({
      DATA_DIR: dataDir,
      ADMIN_PASSWORD: password,
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      LOG_LEVEL: 'silent',
    }),
  );
  const app = await buildApp(runtime.deps);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const csv = path.join(dataDir, 'bench.csv');
    const generated = performance.now();
    await writeCsv(csv);
    const size = (await fs.stat(csv)).size;
    console.log(
      `generated ${rows} rows, ${(size / 1e6).toFixed(1)} MB in ${((performance.now() - generated) / 1000).toFixed(1)} s`,
    );

    const login = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    const token = ((await login.json()) as { data: { token: string } }).data.token;
    const auth = { authorization: `Bearer ${token}` };

    const form = new FormData();
    form.append('name', 'bench');
    form.append('file', await openAsBlob(csv), 'bench.csv');
    const started = performance.now();
    const res = await fetch(`${base}/api/files`, { method: 'POST', headers: auth, body: form });
    const uploaded = (await res.json()) as {
      success: boolean;
      data?: { id: number; settings: { file: { tables: string[]; row_count: number } } };
      error?: unknown;
    };
    const seconds = (performance.now() - started) / 1000;
    if (!uploaded.success || !uploaded.data)
      throw new Error(`upload failed: ${res.status} ${JSON.stringify(uploaded.error)}`);
    const { id, settings } = uploaded.data;

    const previewStarted = performance.now();
    const preview = await fetch(`${base}/api/data-source/${id}/preview`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ table: settings.file.tables[0], limit: 100 }),
    });
    const previewBody = (await preview.json()) as {
      data: { columns: { name: string; db_type: string }[]; rows: unknown[][] };
    };
    const previewMs = performance.now() - previewStarted;

    console.log(
      JSON.stringify(
        {
          node: process.version,
          cores: os.cpus().length,
          rows: settings.file.row_count,
          file_mb: +(size / 1e6).toFixed(1),
          upload_and_import_s: +seconds.toFixed(2),
          rows_per_second: Math.round(settings.file.row_count / seconds),
          mb_per_second: +(size / 1e6 / seconds).toFixed(1),
          preview_ms: Math.round(previewMs),
          preview_rows: previewBody.data.rows.length,
          types: previewBody.data.columns.map((c) => `${c.name}:${c.db_type}`).join(', '),
        },
        null,
        2,
      ),
    );
  } finally {
    await app.close();
    await runtime.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
