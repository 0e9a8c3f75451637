import { open } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';

/**
 * Sheet names of an XLSX workbook, read from xl/workbook.xml and its relations through the zip's central directory
 * (only those two small entries are read). exceljs's streaming reader sometimes never delivers xl/workbook.xml when a
 * writer stores it last (exceljs issue #3064), and then names its sheets by number; this is where the names come from
 * instead. Keyed by the sheet file number (xl/worksheets/sheet<N>.xml); `position` is the order in the workbook.
 * Empty when the file is not a readable zip (the reader reports that itself).
 */
export async function xlsxSheetNames(path: string): Promise<Map<string, { name: string; position: number }>> {
  const out = new Map<string, { name: string; position: number }>();
  try {
    const entries = await readEntries(path, ['xl/workbook.xml', 'xl/_rels/workbook.xml.rels']);
    const workbook = entries.get('xl/workbook.xml');
    const rels = entries.get('xl/_rels/workbook.xml.rels');
    if (!workbook || !rels) return out;
    const targets = new Map<string, string>();
    for (const tag of rels.match(/<(\w+:)?Relationship\b[^>]*>/g) ?? []) {
      const id = attr(tag, 'Id');
      const target = attr(tag, 'Target');
      const n = target && /worksheets\/sheet(\d+)\.xml$/.exec(target)?.[1];
      if (id && n) targets.set(id, n);
    }
    let position = 0;
    for (const tag of workbook.match(/<(\w+:)?sheet\b[^>]*>/g) ?? []) {
      const name = attr(tag, 'name');
      const n = targets.get(attr(tag, 'r:id') ?? attr(tag, 'id') ?? '');
      if (name !== undefined && n) out.set(n, { name, position: position++ });
    }
  } catch {
    // Not a zip we can read: the streaming reader gives the real error.
  }
  return out;
}

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name.replace(':', '\\:')}="([^"]*)"`).exec(tag);
  return m ? decodeXml(m[1]) : undefined;
}

function decodeXml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (named[e.toLowerCase()]) return named[e.toLowerCase()];
    return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
  });
}

/** The named entries of a zip, decompressed, found through its central directory. */
async function readEntries(path: string, names: string[]): Promise<Map<string, string>> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const tailLength = Math.min(size, 22 + 0xffff);
    const tail = Buffer.alloc(tailLength);
    await fh.read(tail, 0, tailLength, size - tailLength);
    let eocd = -1;
    for (let i = tailLength - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === 0x06054b50) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) return new Map();
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    if (cdOffset === 0xffffffff || cdOffset + cdSize > size) return new Map(); // zip64: not for these entries
    const cd = Buffer.alloc(cdSize);
    await fh.read(cd, 0, cdSize, cdOffset);
    const found = new Map<string, string>();
    for (let p = 0; p + 46 <= cd.length && cd.readUInt32LE(p) === 0x02014b50;) {
      const method = cd.readUInt16LE(p + 10);
      const compressed = cd.readUInt32LE(p + 20);
      const nameLength = cd.readUInt16LE(p + 28);
      const extraLength = cd.readUInt16LE(p + 30);
      const commentLength = cd.readUInt16LE(p + 32);
      const local = cd.readUInt32LE(p + 42);
      const name = cd.toString('utf8', p + 46, p + 46 + nameLength);
      p += 46 + nameLength + extraLength + commentLength;
      if (!names.includes(name) || compressed > 64 * 1024 * 1024) continue;
      const header = Buffer.alloc(30);
      await fh.read(header, 0, 30, local);
      if (header.readUInt32LE(0) !== 0x04034b50) continue;
      const data = Buffer.alloc(compressed);
      await fh.read(data, 0, compressed, local + 30 + header.readUInt16LE(26) + header.readUInt16LE(28));
      if (method === 0) found.set(name, data.toString('utf8'));
      else if (method === 8) found.set(name, inflateRawSync(data).toString('utf8'));
    }
    return found;
  } finally {
    await fh.close();
  }
}
