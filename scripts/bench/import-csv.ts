// Measures file import: a generated CSV of N rows (default 1 000 000) into DuckDB, once as UTF-8 and once as
// windows-1251 (the re-encoding path). Run: npx tsx scripts/bench/import-csv.ts [rows]
import iconv from 'iconv-lite';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { importFile } from '../../adapters/sources/file-import/import-file';

const rows = Number(process.argv[2] ?? 1_000_000);

async function writeCsv(path: string, encoding: 'utf-8' | 'windows-1251'): Promise<void> {
  const out = createWriteStream(path);
  const put = async (s: string) => {
    if (!out.write(encoding === 'utf-8' ? s : iconv.encode(s, encoding))) await once(out, 'drain');
  };
  await put('id;город;сумма;дата;время\n');
  let batch = '';
  for (let i = 0; i < rows; i++) {
    const day = String((i % 28) + 1).padStart(2, '0');
    batch += `${i};Город ${i % 500};${(i % 100000) / 100};2024-03-${day};2024-03-${day} ${String(i % 24).padStart(2, '0')}:15:00\n`;
    if (batch.length > 1 << 16) {
      await put(batch);
      batch = '';
    }
  }
  await put(batch);
  await new Promise<void>((resolve) => out.end(resolve));
}

const dir = await mkdtemp(join(tmpdir(), 'bench-import-'));
try {
  for (const encoding of ['utf-8', 'windows-1251'] as const) {
    const csv = join(dir, `data-${encoding}.csv`);
    await writeCsv(csv, encoding);
    const size = (await stat(csv)).size;
    const started = performance.now();
    const r = await importFile({
      input_path: csv,
      format: 'csv',
      duckdb_path: join(dir, `${encoding}.duckdb`),
      table_name: 'data',
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      JSON.stringify({
        encoding,
        rows: r.row_count,
        file_mb: +(size / 1e6).toFixed(1),
        seconds: +seconds.toFixed(2),
        rows_per_second: Math.round(r.row_count / seconds),
        types: r.columns.map((c) => `${c.name}:${c.db_type}`).join(', '),
      }),
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
