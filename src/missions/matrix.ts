/**
 * The stop-behaviour matrix (seed §10.1, HAR-25; build spec A2.8, A3.10, C-A2, C-A9): an
 * immutable strict-JSON document named `<id>@<version>` whose JCS digest is pinned in every work
 * item created under it. Every (row × action class) cell must meet the draft's minimum; anything
 * else is `stop_matrix_invalid` and `baton serve` refuses to start (exit 2).
 */
import { digestJcs, type Sha256Digest } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { parseStrictJson, positionIn, type JsonObject } from '../core/json.js';
import {
  ACTION_CLASSES,
  HIGH_CONSEQUENCE,
  MATRIX_ROWS,
  type ActionClass,
  type MatrixRow,
  type StopBehaviour,
} from './model.js';

/** A2.8 minimums (C-A9: `handoff` meets every non-active row; `cascaded` as `revoked`). */
export const ALLOWED: Readonly<Record<MatrixRow, readonly StopBehaviour[]>> = {
  revoked: ['suppress', 'terminate', 'handoff'],
  expired: ['suppress', 'terminate', 'handoff'],
  completed: ['suppress', 'terminate', 'handoff'],
  cascaded: ['suppress', 'terminate', 'handoff'],
  suspended: ['pause', 'suppress', 'handoff'],
  superseded: ['suppress', 'handoff'],
  unknown: ['suppress', 'pause', 'handoff'],
  stale: ['suppress', 'pause', 'handoff'],
  other: ['suppress', 'pause', 'handoff'],
};

export interface StopMatrix {
  readonly id: string;
  readonly version: string;
  readonly rows: Readonly<Record<MatrixRow, Readonly<Record<ActionClass, StopBehaviour>>>>;
  /**
   * What a high-consequence item with an entered occurrence in flight gets (HAR-25 SHOULD:
   * handoff/unwind); `row` = the row's own cell.
   */
  readonly in_flight_high_consequence: 'handoff' | 'row';
}

export interface PinnedMatrix {
  readonly matrix: StopMatrix;
  /** `<id>@<version>` (C-A2). */
  readonly ref: string;
  readonly digest: Sha256Digest;
}

const ID_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const VERSION_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;

function invalid(message: string, details: Record<string, unknown> = {}): never {
  throw new BatonError('stop_matrix_invalid', message, details);
}

function object(v: unknown, path: string): JsonObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) invalid(`${path} must be an object`, { path });
  return v as JsonObject;
}

function closed(o: JsonObject, path: string, names: readonly string[]): void {
  for (const name of Object.keys(o)) {
    if (!names.includes(name)) invalid(`${path} has an unknown member`, { path, member: name });
  }
  for (const name of names) {
    if (!Object.hasOwn(o, name)) invalid(`${path} lacks a member`, { path, member: name });
  }
}

function readRow(v: unknown, row: MatrixRow): Record<ActionClass, StopBehaviour> {
  const path = `$.rows.${row}`;
  const o = object(v, path);
  closed(o, path, ACTION_CLASSES);
  const out = {} as Record<ActionClass, StopBehaviour>;
  for (const cls of ACTION_CLASSES) {
    const b = o[cls];
    // A2.8: never `continue` for a non-active row; each row has its own floor.
    if (typeof b !== 'string' || !(ALLOWED[row] as readonly string[]).includes(b)) {
      invalid(`${row} × ${cls} must be one of ${ALLOWED[row].join('|')}`, {
        row,
        actionClass: cls,
        value: b,
      });
    }
    out[cls] = b as StopBehaviour;
  }
  return out;
}

/** Validate a parsed document against A2.8 (every cell present and within the minimum). */
export function validateMatrix(value: unknown): StopMatrix {
  const o = object(value, '$');
  closed(o, '$', ['id', 'version', 'rows', 'in_flight_high_consequence']);
  const { id, version } = o;
  if (typeof id !== 'string' || !ID_RE.test(id))
    invalid('$.id must be a short lowercase name', { path: '$.id' });
  if (typeof version !== 'string' || !VERSION_RE.test(version))
    invalid('$.version must be a short version string', { path: '$.version' });
  const rowsIn = object(o['rows'], '$.rows');
  closed(rowsIn, '$.rows', MATRIX_ROWS);
  const rows = {} as Record<MatrixRow, Record<ActionClass, StopBehaviour>>;
  for (const row of MATRIX_ROWS) rows[row] = readRow(rowsIn[row], row);
  const inFlight = o['in_flight_high_consequence'];
  if (inFlight !== 'handoff' && inFlight !== 'row')
    invalid('$.in_flight_high_consequence must be "handoff" or "row"', {
      path: '$.in_flight_high_consequence',
    });
  return { id, version, rows, in_flight_high_consequence: inFlight };
}

/** Parse the bytes as strict JSON (duplicate members refused) and validate; errors are `stop_matrix_invalid`. */
export function parseMatrix(bytes: string | Uint8Array): PinnedMatrix {
  let value: unknown;
  try {
    value = parseStrictJson(bytes);
  } catch (error) {
    const code = error instanceof BatonError ? error.code : 'json_malformed';
    // Where and why, as --config's refusal says it: line and column from 1 (the column in characters).
    const offset = error instanceof BatonError ? error.details['byteOffset'] : undefined;
    const raw = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    const at = typeof offset === 'number' ? ` at ${positionIn(raw, offset)}` : '';
    const why = error instanceof BatonError ? `: ${error.message}` : '';
    throw new BatonError('stop_matrix_invalid', `the stop matrix is not strict JSON${at}${why}`, {
      cause: code,
      ...(typeof offset === 'number' && { byteOffset: offset }),
    });
  }
  return pin(validateMatrix(value));
}

export function pin(matrix: StopMatrix): PinnedMatrix {
  return { matrix, ref: `${matrix.id}@${matrix.version}`, digest: digestJcs(matrix) };
}

function defaultRow(row: MatrixRow): Record<ActionClass, StopBehaviour> {
  // A2.8 default: suspended/unknown/stale/other → pause, cascaded → terminate, else suppress.
  const b: StopBehaviour =
    row === 'cascaded'
      ? 'terminate'
      : row === 'suspended' || row === 'unknown' || row === 'stale' || row === 'other'
        ? 'pause'
        : 'suppress';
  return Object.fromEntries(ACTION_CLASSES.map((c) => [c, b])) as Record<ActionClass, StopBehaviour>;
}

export const DEFAULT_MATRIX: PinnedMatrix = pin({
  id: 'baton-default',
  version: '1',
  rows: Object.fromEntries(MATRIX_ROWS.map((r) => [r, defaultRow(r)])) as StopMatrix['rows'],
  in_flight_high_consequence: 'handoff',
});

/** The behaviour for a non-active row and class; `inFlight` = an entered occurrence is unresolved. */
export function behaviourFor(
  matrix: StopMatrix,
  row: MatrixRow,
  actionClass: ActionClass,
  inFlight = false,
): StopBehaviour {
  if (inFlight && HIGH_CONSEQUENCE.includes(actionClass) && matrix.in_flight_high_consequence === 'handoff') {
    return 'handoff';
  }
  return matrix.rows[row][actionClass];
}
