// `npm start` runs the build only when the sources differ from it (scripts/build-stamp.mjs): by the files' identities
// while they are those recorded with the build, else by their contents. A file rewritten with its size and
// modification time kept is still seen; a file touched but unchanged does not cause a build, and is not hashed again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

interface Stamp {
  isCurrent(): boolean;
  sourcesHash(): string;
  sourcesStat(): string;
  stampText(hash: string, stat: string): string;
  buildDirOf(hash: string): string;
  stampFile: string;
}

describe('the build stamp', () => {
  let dir: string;
  let stamp: Stamp;

  beforeEach(async () => {
    // A checkout of its own: the module finds the sources and dist/ from where it lies.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stamp-'));
    fs.mkdirSync(path.join(dir, 'scripts'));
    fs.copyFileSync(path.join(__dirname, '../../scripts/build-stamp.mjs'), path.join(dir, 'scripts/build-stamp.mjs'));
    for (const f of ['package.json', 'tsconfig.json', 'scripts/build.mjs']) fs.writeFileSync(path.join(dir, f), '{}');
    for (const d of ['server', 'routers', 'db', 'adapters']) fs.mkdirSync(path.join(dir, d));
    fs.writeFileSync(path.join(dir, 'server/a.ts'), 'export const a = 1;\n');
    stamp = (await import(pathToFileURL(path.join(dir, 'scripts/build-stamp.mjs')).href)) as Stamp;
    const hash = stamp.sourcesHash();
    fs.mkdirSync(path.join(dir, 'dist', stamp.buildDirOf(hash)), { recursive: true });
    fs.writeFileSync(path.join(dir, 'dist', stamp.buildDirOf(hash), 'main.js'), '');
    fs.writeFileSync(path.join(dir, 'dist/main.js'), '');
    fs.writeFileSync(stamp.stampFile, stamp.stampText(hash, stamp.sourcesStat()));
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is current while nothing changed', () => {
    expect(stamp.isCurrent()).toBe(true);
  });

  it('sees a file rewritten with the same size and modification time', () => {
    const file = path.join(dir, 'server/a.ts');
    // A whole second, which utimes sets exactly (as cp -p and rsync -t would).
    const second = 1_700_000_000;
    fs.utimesSync(file, second, second);
    fs.writeFileSync(stamp.stampFile, stamp.stampText(stamp.sourcesHash(), stamp.sourcesStat()));
    expect(stamp.isCurrent()).toBe(true);
    const before = fs.statSync(file);
    fs.writeFileSync(file, 'export const a = 2;\n');
    fs.utimesSync(file, second, second);
    expect(fs.statSync(file)).toMatchObject({ size: before.size, ino: before.ino, mtimeMs: before.mtimeMs });
    expect(stamp.isCurrent()).toBe(false);
  });

  it('sees a new file', () => {
    fs.writeFileSync(path.join(dir, 'db/0002.sql'), 'select 1;\n');
    expect(stamp.isCurrent()).toBe(false);
  });

  it('a touched but unchanged file is current, and its new identity is recorded for the next start', () => {
    const file = path.join(dir, 'server/a.ts');
    fs.utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    const stat = stamp.sourcesStat();
    expect(fs.readFileSync(stamp.stampFile, 'utf8')).not.toContain(stat);
    expect(stamp.isCurrent()).toBe(true);
    expect(fs.readFileSync(stamp.stampFile, 'utf8')).toBe(stamp.stampText(stamp.sourcesHash(), stat));
  });

  it('reads a stamp of the earlier one-line form by the contents', () => {
    fs.writeFileSync(stamp.stampFile, `${stamp.sourcesHash()}\n`);
    expect(stamp.isCurrent()).toBe(true);
  });
});
