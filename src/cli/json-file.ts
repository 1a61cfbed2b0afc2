/**
 * A JSON file a command reads (a config, a tokens file, a profile): core's strict parser, and a
 * refusal that names the file and where in it the parser stopped (`FILE line 3, column 7 (byte
 * 41): malformed JSON: expected a member name`), keeping the parser's code (`json_malformed`,
 * `json_duplicate_member`, …) and its details. The user fixes a file, not an offset in a message.
 */
import { Buffer } from 'node:buffer';
import { BatonError, isBatonError } from '../core/errors.js';
import { parseStrictJson, type JsonValue } from '../core/json.js';
import { readInput } from './command.js';
import type { CliIo } from './io.js';

export function parseJsonFile(bytes: Uint8Array, file: string): JsonValue {
  try {
    return parseStrictJson(bytes);
  } catch (error) {
    throw locateJsonError(error, bytes, file);
  }
}

/** The name a refusal gives an input: its path, or `stdin` for `-` or none (readInput's rule). */
export function inputName(file: string | undefined): string {
  return file === undefined || file === '-' ? 'stdin' : file;
}

/** The JSON document named by FILE, or standard input for `-` or none, refused by name and position. */
export async function readJsonInput(file: string | undefined, io: CliIo): Promise<JsonValue> {
  return parseJsonFile(await readInput(file, io), inputName(file));
}

/**
 * Why and where strict JSON parsing of `bytes` stops (`at`: `line 3, column 15 (byte 46)`, empty
 * when the parser gives no offset), or undefined when they parse. For readers that refuse
 * unparseable JSON under their own code (`ERR_LEASE_MALFORMED`, `observation_record_invalid`,
 * `config_invalid`): they keep that code and gain the position. Called only on a refusal, so
 * parsing again costs nothing on success.
 */
export function jsonFailure(bytes: Uint8Array): { at: string; message: string } | undefined {
  try {
    parseStrictJson(bytes);
    return undefined;
  } catch (error) {
    if (!isBatonError(error)) throw error;
    if (!error.code.startsWith('json_')) return undefined;
    const byteOffset = error.details['byteOffset'];
    const at = typeof byteOffset === 'number' ? positionIn(bytes, byteOffset) : '';
    return { at, message: error.message };
  }
}

/** `: line L, column C (byte B): <the parser's reason>` when `bytes` are not strict JSON, else ''. */
export function whyNotJson(bytes: Uint8Array): string {
  const failure = jsonFailure(bytes);
  if (failure === undefined) return '';
  return failure.at === '' ? `: ${failure.message}` : `: ${failure.at}: ${failure.message}`;
}

/**
 * `error` (same code and cause) named by FILE and, when the bytes are not strict JSON, the position
 * and the parser's reason: `FILE line 1, column 2 (byte 1): lease is not strict JSON: malformed JSON: …`.
 */
export function locateWrappedJsonError(error: BatonError, bytes: Uint8Array, file: string): BatonError {
  const failure = jsonFailure(bytes);
  const at = failure === undefined || failure.at === '' ? '' : ` ${failure.at}`;
  const why = failure === undefined ? '' : `: ${failure.message}`;
  return new BatonError(
    error.code,
    `${file}${at}: ${error.message}${why}`,
    { ...error.details, file },
    {
      cause: error,
    },
  );
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
