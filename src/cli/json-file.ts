/**
 * A JSON file a command reads (a config, a tokens file, a profile): core's strict parser, and a
 * refusal that names the file and where in it the parser stopped (`FILE line 3, column 7 (byte
 * 41): malformed JSON: expected a member name`), keeping the parser's code (`json_malformed`,
 * `json_duplicate_member`, …) and its details. The user fixes a file, not an offset in a message.
 */
import { Buffer } from 'node:buffer';
import { BatonError, isBatonError } from '../core/errors.js';
import { parseStrictJson, type JsonValue } from '../core/json.js';

export function parseJsonFile(bytes: Uint8Array, file: string): JsonValue {
  try {
    return parseStrictJson(bytes);
  } catch (error) {
    throw locateJsonError(error, bytes, file);
  }
}

/** A JSON parse refusal named by file and position; anything else passes through unchanged. */
export function locateJsonError(error: unknown, bytes: Uint8Array, file: string): unknown {
  if (!isBatonError(error) || !error.code.startsWith('json_')) return error;
  const byteOffset = error.details['byteOffset'];
  const at = typeof byteOffset === 'number' ? ` ${positionIn(bytes, byteOffset)}` : '';
  return new BatonError(
    error.code,
    `${file}${at}: ${error.message}`,
    { ...error.details, file },
    { cause: error },
  );
}

/** `line L, column C (byte B)`: lines and columns from 1, the column counted in characters. */
export function positionIn(bytes: Uint8Array, byteOffset: number): string {
  const end = Math.min(byteOffset, bytes.length);
  let line = 1;
  let start = 0;
  for (let i = 0; i < end; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      start = i + 1;
    }
  }
  const column = [...Buffer.from(bytes.subarray(start, end)).toString('utf8')].length + 1;
  return `line ${line}, column ${column} (byte ${byteOffset})`;
}
