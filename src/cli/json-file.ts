/**
 * A JSON file a command reads (a config, a tokens file, a profile): core's strict parser, and a
 * refusal that names the file and where in it the parser stopped (`FILE line 3, column 7 (byte
 * 41): malformed JSON: expected a member name`), keeping the parser's code (`json_malformed`,
 * `json_duplicate_member`, …) and its details. The user fixes a file, not an offset in a message.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import { parseStrictJson, positionIn, type JsonValue } from '../core/json.js';
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

/** The strict-JSON parser's own refusal: `error` itself or one of its causes (a reader wrapped it). */
function parserRefusal(error: unknown): BatonError | undefined {
  let e: unknown = error;
  for (let depth = 0; e !== undefined && depth < 8; depth++) {
    if (isBatonError(e) && e.code.startsWith('json_')) return e;
    e = e instanceof Error ? e.cause : undefined;
  }
  return undefined;
}

/**
 * Why and where strict JSON parsing of `bytes` stopped, read from the parser's refusal behind
 * `error` (`at`: `line 3, column 15 (byte 46)`, empty when it gives no offset), or undefined when
 * `error` is no JSON refusal. For readers that refuse unparseable JSON under their own code
 * (`ERR_LEASE_MALFORMED`, `observation_record_invalid`, `config_invalid`): they keep that code and
 * gain the position, without parsing the bytes again.
 */
export function jsonStop(error: unknown, bytes: Uint8Array): { at: string; message: string } | undefined {
  const refusal = parserRefusal(error);
  if (refusal === undefined) return undefined;
  const byteOffset = refusal.details['byteOffset'];
  return {
    at: typeof byteOffset === 'number' ? positionIn(bytes, byteOffset) : '',
    message: refusal.message,
  };
}

/** `: line L, column C (byte B): <the parser's reason>` when `error` is a JSON refusal, else ''. */
export function whyNotJson(error: unknown, bytes: Uint8Array): string {
  const stop = jsonStop(error, bytes);
  if (stop === undefined) return '';
  return stop.at === '' ? `: ${stop.message}` : `: ${stop.at}: ${stop.message}`;
}

/**
 * `error` (same code and cause) named by FILE and, when a JSON refusal is behind it, the position
 * and the parser's reason: `FILE line 1, column 2 (byte 1): lease is not strict JSON: malformed JSON: …`.
 */
export function locateWrappedJsonError(error: BatonError, bytes: Uint8Array, file: string): BatonError {
  const stop = jsonStop(error, bytes);
  const at = stop === undefined || stop.at === '' ? '' : ` ${stop.at}`;
  const why = stop === undefined ? '' : `: ${stop.message}`;
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
