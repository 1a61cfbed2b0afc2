/**
 * What the PostgreSQL engine changes between the portable SQL of the store port (engine.ts) and
 * `pg` (DESIGN.md §2): `?` placeholders become `$1…$n`, and result values get the types SQLite
 * gives them, so a caller sees the same row on both engines.
 */
import pg from 'pg';
import { BatonError } from '../core/errors.js';

export interface PostgresStatement {
  /** The SQL text with `$1…$n` placeholders. */
  readonly text: string;
  /** How many placeholders it has. */
  readonly params: number;
  /**
   * The name it is prepared under on each connection (parsed and planned once per connection,
   * not per execution), for plain DML; undefined for anything else (DDL, settings), which runs
   * unnamed so that a schema change never meets a plan prepared before it.
   */
  readonly name?: string;
}

const PREPARED = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;
let statementNames = 0;

/** Where a quoted token or comment that starts at `i` ends (the index after it), or -1 for none. */
function skipQuotedOrComment(sql: string, i: number): number {
  const c = sql[i];
  if (c === "'" || c === '"') {
    // A doubled quote inside is an escaped quote; standard_conforming_strings (the default since
    // PostgreSQL 9.1) makes backslashes plain characters, as in SQLite.
    let j = i + 1;
    for (;;) {
      const k = sql.indexOf(c, j);
      if (k < 0) return sql.length;
      if (sql[k + 1] !== c) return k + 1;
      j = k + 2;
    }
  }
  if (c === '-' && sql[i + 1] === '-') {
    const end = sql.indexOf('\n', i);
    return end < 0 ? sql.length : end;
  }
  if (c === '/' && sql[i + 1] === '*') {
    const end = sql.indexOf('*/', i + 2);
    return end < 0 ? sql.length : end + 2;
  }
  return -1;
}

/**
 * Rewrite `?` placeholders to `$1…$n`, leaving string literals, quoted identifiers and comments
 * alone. Portable SQL has no dollar-quoted bodies, `E'…'` strings or `?` operators (engine.ts).
 */
export function toPostgresPlaceholders(sql: string): PostgresStatement {
  let text = '';
  let params = 0;
  let from = 0;
  for (let i = 0; i < sql.length;) {
    const end = skipQuotedOrComment(sql, i);
    if (end >= 0) {
      i = end;
    } else if (sql[i] === '?') {
      params += 1;
      text += `${sql.slice(from, i)}$${params}`;
      from = i + 1;
      i += 1;
    } else {
      i += 1;
    }
  }
  return { text: text + sql.slice(from), params };
}

/**
 * The same SQL as a `format()` template for migration 016's `baton_batch`: every `?` placeholder
 * becomes `%L` (the parameter as a quoted literal) and every `%`, quoted or not, `%%`.
 */
export function toFormatTemplate(sql: string): { readonly text: string; readonly params: number } {
  let text = '';
  let params = 0;
  for (let i = 0; i < sql.length;) {
    const end = skipQuotedOrComment(sql, i);
    if (end >= 0) {
      text += sql.slice(i, end).replaceAll('%', '%%');
      i = end;
      continue;
    }
    const c = sql[i] as string;
    if (c === '?') params += 1;
    text += c === '?' ? '%L' : c === '%' ? '%%' : c;
    i += 1;
  }
  return { text, params };
}

/** A bounded cache of rewritten statements, by SQL text (oldest evicted first). */
export class StatementTexts {
  readonly #map = new Map<string, PostgresStatement>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get(sql: string, given: number): PostgresStatement {
    let stmt = this.#map.get(sql);
    if (stmt === undefined) {
      const rewritten = toPostgresPlaceholders(sql);
      // A name is never reused for another text, even after eviction (pg keeps each connection's).
      stmt = PREPARED.test(sql) ? { ...rewritten, name: `baton_${(statementNames += 1)}` } : rewritten;
      const oldest = this.#map.keys().next();
      if (this.#map.size >= this.#max && oldest.done !== true) this.#map.delete(oldest.value);
      this.#map.set(sql, stmt);
    }
    // Checked here: PostgreSQL answers a count mismatch with a protocol error (08P01), which
    // would otherwise look like a lost connection.
    if (stmt.params !== given) {
      throw new BatonError(
        'internal',
        `the statement has ${stmt.params} placeholder(s) but ${given} parameter(s) were given`,
      );
    }
    return stmt;
  }
}

/** An integer column: a number within the safe range (as SQLite returns it), a bigint beyond. */
export function parseInteger(text: string): number | bigint {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

/** NUMERIC (what SUM of BIGINT returns): an integer as above; a fraction as a double, like SQLite's REAL. */
export function parseNumeric(text: string): number | bigint {
  return /^-?\d+$/.test(text) ? parseInteger(text) : Number(text);
}

/**
 * The type parsers of one engine's pool, never the process-wide `pg.types` (another `pg` user in
 * the same process keeps its own defaults). BIGINT and NUMERIC as above; BOOLEAN (what a
 * comparison or EXISTS returns) as 1/0, which is what SQLite returns for them.
 */
export function engineTypes(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  const { INT8, NUMERIC, BOOL } = pg.types.builtins;
  types.setTypeParser(INT8, 'text', parseInteger);
  types.setTypeParser(NUMERIC, 'text', parseNumeric);
  types.setTypeParser(BOOL, 'text', (text: string) => (text === 't' ? 1 : 0));
  return types;
}
