import chardet from 'chardet';
import iconv from 'iconv-lite';
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { ConnectorError } from '../types';

/** Bytes read to decide the encoding: enough Cyrillic text for chardet to tell cp1251 from KOI8-R. */
const SAMPLE_BYTES = 256 * 1024;

/**
 * The text encoding of a file: 'utf-8' when the sample is valid UTF-8 (with or without BOM), else chardet's
 * guess (Russian exports from Excel and 1C are usually windows-1251).
 */
export async function detectEncoding(path: string): Promise<string> {
  const fh = await open(path, 'r');
  let sample: Buffer;
  try {
    const buf = Buffer.alloc(SAMPLE_BYTES);
    const { bytesRead } = await fh.read(buf, 0, SAMPLE_BYTES, 0);
    sample = buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
  if (
    sample.length >= 2 &&
    ((sample[0] === 0xff && sample[1] === 0xfe) || (sample[0] === 0xfe && sample[1] === 0xff))
  ) {
    return sample[0] === 0xff ? 'utf-16le' : 'utf-16be';
  }
  // NUL bytes do not occur in text outside UTF-16/32: this is a binary file under a .csv name.
  if (sample.includes(0))
    throw new ConnectorError('Файл не похож на текстовый CSV: в нём есть двоичные данные', 'settings');
  if (isUtf8(sample)) return 'utf-8';
  const candidates = chardet.analyse(sample).filter((c) => iconv.encodingExists(c.name));
  const top = candidates[0];
  if (top && CYRILLIC.has(top.name.toLowerCase())) return top.name.toLowerCase();
  // chardet is unreliable on short samples (a three-line cp1251 file comes out as Hebrew); our users' files are
  // mostly Russian, so text whose non-ASCII bytes carry most of the letters is taken as Cyrillic.
  const cyrillic = cyrillicGuess(sample);
  if (cyrillic) return cyrillic;
  return top ? top.name.toLowerCase() : 'windows-1251';
}

const CYRILLIC = new Set(['windows-1251', 'koi8-r', 'ibm866', 'iso-8859-5', 'x-mac-cyrillic']);

/**
 * windows-1251 or koi8-r when the sample looks like Cyrillic text in a single-byte encoding. Both put letters in
 * 0xC0-0xFF, with the cases swapped: lower case (most of any text) is 0xE0-0xFF in cp1251, 0xC0-0xDF in KOI8-R.
 */
function cyrillicGuess(sample: Buffer): string | undefined {
  let asciiLetters = 0;
  let upperHalf = 0; // 0xC0-0xDF
  let lowerHalf = 0; // 0xE0-0xFF
  for (const b of sample) {
    if ((b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)) asciiLetters++;
    else if (b >= 0xc0 && b <= 0xdf) upperHalf++;
    else if (b >= 0xe0) lowerHalf++;
  }
  const high = upperHalf + lowerHalf;
  if (high === 0 || high / (high + asciiLetters) < 0.3) return undefined;
  return lowerHalf >= upperHalf ? 'windows-1251' : 'koi8-r';
}

/** Re-encodes a file to UTF-8 as a stream (memory stays flat whatever the file size). */
export async function convertToUtf8(src: string, dst: string, encoding: string): Promise<void> {
  await pipeline(
    createReadStream(src),
    iconv.decodeStream(encoding, { stripBOM: true }),
    iconv.encodeStream('utf-8'),
    createWriteStream(dst),
  );
}

function isUtf8(sample: Buffer): boolean {
  // The sample may end inside a multi-byte character: drop an incomplete tail before validating.
  let end = sample.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const b = sample[end - i];
    if ((b & 0xc0) === 0x80) continue; // continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    if (need > i) end -= i;
    break;
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}
