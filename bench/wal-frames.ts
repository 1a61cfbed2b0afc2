/**
 * A SQLite WAL file's frames, read straight from the file (32-byte header, then per frame a 24-byte
 * header and one page): which pages one COMMIT wrote, whether or not the WAL restarted before it
 * (bench/wal-pages.ts, bench/missions-entry.bench.ts).
 */
import { readFileSync } from 'node:fs';

export interface Frames {
  readonly salt: string;
  readonly pages: readonly number[];
}

/** The frames of the WAL's current generation (those whose salts match its header). */
export function readWal(path: string): Frames {
  const buf = readFileSync(path);
  if (buf.length < 32) return { salt: '', pages: [] };
  const pageSize = buf.readUInt32BE(8);
  const salt = buf.subarray(16, 24).toString('hex');
  const pages: number[] = [];
  for (let off = 32; off + 24 + pageSize <= buf.length; off += 24 + pageSize) {
    if (buf.subarray(off + 8, off + 16).toString('hex') !== salt) break;
    pages.push(buf.readUInt32BE(off));
  }
  return { salt, pages };
}

export function newFrames(before: Frames, after: Frames): readonly number[] {
  return after.salt === before.salt ? after.pages.slice(before.pages.length) : after.pages;
}
