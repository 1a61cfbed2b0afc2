/**
 * Reading a file a config names (the config itself, its tokens file, profile and issuer pin files,
 * producer key files): only a regular file, and at most `maxBytes` of it. A FIFO would block the
 * read until something writes to it, and a device (`/dev/zero`) or a file that keeps growing would
 * be read without end; each is refused instead, with a reason the caller's typed error names
 * (`inputFileWhy`). The open is non-blocking, so even a path that became a FIFO after it was named
 * is refused, never waited on.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { DEFAULT_JSON_MAX_BYTES } from '../../core/json.js';

/** Every file read here is JSON or a PEM key, and JSON over 1 MiB is refused anyway (core/json.ts). */
export const INPUT_FILE_MAX_BYTES = DEFAULT_JSON_MAX_BYTES;

/** Why a file was not read (not an OS error): always wrapped into the caller's BatonError. */
export class InputFileRefused extends Error {
  override readonly name = 'InputFileRefused';
}

/** The file's bytes; OS errors (ENOENT, EACCES, …) propagate as they are. */
export async function readInputFile(path: string, maxBytes = INPUT_FILE_MAX_BYTES): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new InputFileRefused(`not a regular file (${kindOf(info)})`);
    if (info.size > maxBytes) throw tooLarge(maxBytes);
    // Read at most one byte more than allowed: a file that grew since the stat is refused too.
    const buffer = Buffer.alloc(maxBytes + 1);
    let total = 0;
    while (total < buffer.length) {
      const { bytesRead } = await handle.read(buffer, total, buffer.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    if (total > maxBytes) throw tooLarge(maxBytes);
    return buffer.subarray(0, total);
  } finally {
    await handle.close();
  }
}

function tooLarge(maxBytes: number): InputFileRefused {
  return new InputFileRefused(`larger than ${maxBytes} bytes`);
}

function kindOf(info: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
}): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSocket()) return 'a socket';
  return 'not a file';
}

/** `: WHY` for a refusal of readInputFile, '' for anything else (an OS error keeps its message). */
export function inputFileWhy(cause: unknown): string {
  return cause instanceof InputFileRefused ? `: ${cause.message}` : '';
}
