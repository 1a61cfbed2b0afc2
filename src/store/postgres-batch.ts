/**
 * Deferred statements on PostgreSQL (issue 16 §2, docs/store.md "One round trip per
 * transition"): writes whose only answer Baton needs is "it changed this many rows" (and evidence
 * appends, whose hashes Baton checks) wait in the transaction and leave as ONE call of migration
 * 016's `baton_batch`, with the next statement the transaction sends or before its COMMIT — each
 * hot one by the key of its static SQL after migration 022. This module encodes that call and
 * decodes its answer; postgres.ts decides when it is sent.
 */
import { BatonError } from '../core/errors.js';
import type { DeferOptions, SqlValue } from './engine.js';
import type { StaticStatement } from './migrations/022_static_transition_writes.js';
import { toFormatTemplate } from './postgres-sql.js';

/** SQLSTATE of migration 016's `baton_batch` when a deferred statement changed another row count. */
export const DEFERRED_MISMATCH = 'BTN10';

export interface DeferredStatement {
  readonly sql: string;
  readonly params: readonly SqlValue[];
  readonly options: DeferOptions;
}

/** How the statement that carries the batch is answered: its rows, or its row count. */
export type Final = { readonly sql: string; readonly params: readonly SqlValue[]; readonly rows: boolean };

const templates = new Map<string, { readonly text: string; readonly params: number }>();

function template(sql: string, given: number): string {
  let t = templates.get(sql);
  if (t === undefined) {
    t = toFormatTemplate(sql);
    if (templates.size >= 512) templates.clear();
    templates.set(sql, t);
  }
  if (t.params !== given) {
    throw new BatonError(
      'internal',
      `the statement has ${t.params} placeholder(s) but ${given} parameter(s)`,
    );
  }
  return t.text;
}

/** A parameter as `format('%L')` quotes it: text (NULL stays NULL, quote_nullable). */
const asText = (v: SqlValue): string | null => (v === null ? null : String(v));

/**
 * The static statements `baton_batch_static` holds in the database's schema, by exact portable
 * text (migration 022's, or 024's which adds one), or undefined before 022: every item as text.
 */
export type StaticRegistry = ReadonlyMap<string, StaticStatement>;

/** One item: a static statement by its key (migration 022) where one matches, else its text (016). */
function item(
  sql: string,
  params: readonly SqlValue[],
  rows: boolean,
  statics: StaticRegistry | undefined,
  expect?: number,
  json?: readonly number[],
): string {
  const found = statics?.get(sql);
  // Only where the static branch answers what this item asks for (rows or a count).
  const known = found?.rows === rows ? found : undefined;
  if (known !== undefined && known.params !== params.length) {
    throw new BatonError(
      'internal',
      `the statement has ${known.params} placeholder(s) but ${params.length} parameter(s)`,
    );
  }
  if (json === undefined || json.length === 0) {
    // Built member by member, not by spreading conditional parts: one item per deferred statement
    // of every transition (the same members in the same order, so the same JSON).
    const out: { s?: string; k?: string; p: (string | null)[]; e?: number; q?: 1 } =
      known === undefined ? { s: template(sql, params.length), p: [] } : { k: known.key, p: [] };
    for (const v of params) out.p.push(asText(v));
    if (expect !== undefined) out.e = expect;
    if (rows) out.q = 1;
    return JSON.stringify(out);
  }
  // The same members in the same order; a JSON parameter goes as the value it is, not as a string
  // escaped a second time (its text is most of the batch: an evidence run and its bodies). Only
  // these items are written out by hand: every item that way measured +0.7% of the server's
  // instructions per lifecycle (a JSON.stringify per parameter instead of one per item).
  const head =
    known === undefined
      ? `"s":${JSON.stringify(template(sql, params.length))}`
      : `"k":${JSON.stringify(known.key)}`;
  const p = params.map((v, i) => (typeof v === 'string' && json.includes(i) ? v : JSON.stringify(asText(v))));
  return `{${head},"p":[${p.join(',')}]${expect === undefined ? '' : `,"e":${expect}`}${rows ? ',"q":1' : ''}}`;
}

/**
 * The `baton_batch` argument: the deferred statements in order, then `final` if any. `statics`:
 * what the database's `baton_batch_static` holds (migration 022 or later), so a statement it holds
 * as static SQL goes by its key; undefined, each as text.
 */
export function encodeBatch(
  deferred: readonly DeferredStatement[],
  final: Final | undefined,
  statics: StaticRegistry | undefined,
): string {
  const items = deferred.map((d) =>
    item(d.sql, d.params, d.options.rows !== undefined, statics, d.options.expect, d.options.jsonParams),
  );
  if (final !== undefined) items.push(item(final.sql, final.params, final.rows, statics));
  return `[${items.join(',')}]`;
}

/**
 * Rows as the batch returns them (JSON) in the types a plain statement's rows have
 * (postgres-sql.ts engineTypes): BOOLEAN as 1/0; an integer beyond 2^53, which JSON would round,
 * refused (fail closed), never rounded.
 */
function revive(_key: string, value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    throw new BatonError('store_corrupt', 'a batched statement returned an integer beyond 2^53');
  }
  return value;
}

/** One answer per item: a row count, or the rows. */
export function decodeBatch(text: string | undefined, items: number): (number | object[])[] {
  const out = JSON.parse(text ?? 'null', revive) as unknown;
  if (!Array.isArray(out) || out.length !== items) {
    throw new BatonError('internal', 'baton_batch answered another number of results than it was sent');
  }
  return out as (number | object[])[];
}
