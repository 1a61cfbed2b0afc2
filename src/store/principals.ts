/**
 * The principals of the HTTP API (docs/api.md "Authentication"): admin/operator tokens in
 * `api_tokens` (migration 003), and a read of the executor credentials that takeover issues
 * (`aoc_credentials`, AOC-REQ-006), so the server learns a bearer's lineage and generation from
 * the very records the occurrences service checks. Only secret digests are ever stored or read.
 * Token changes append evidence (`token:<id>`) in the same transaction (DESIGN.md §2).
 */
import { BatonError } from '../core/errors.js';
import type { SqlExecutor, StoreEngine } from './engine.js';
import { appendEvidence } from './evidence-log.js';

export const PRINCIPAL_ROLES = ['operator', 'admin'] as const;
export type PrincipalRole = (typeof PRINCIPAL_ROLES)[number];

export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  readonly role: PrincipalRole;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

export interface StoredToken extends TokenRecord {
  /** `sha-256:` + base64url of the secret's SHA-256; never the secret. */
  readonly secretDigest: string;
}

export interface ExecutorCredentialRow {
  readonly lineage: string;
  readonly generation: number;
  readonly retiredAt: number | null;
}

interface TokenRow {
  id: string;
  name: string;
  role: string;
  secret_digest: string;
  created_at: number | string;
  revoked_at: number | string | null;
}

const COLUMNS = 'id, name, role, secret_digest, created_at, revoked_at';

function fromRow(row: TokenRow): StoredToken {
  if (!(PRINCIPAL_ROLES as readonly string[]).includes(row.role)) {
    throw new BatonError('store_corrupt', 'a token row has an unknown role', { id: row.id });
  }
  return {
    id: row.id,
    name: row.name,
    role: row.role as PrincipalRole,
    secretDigest: row.secret_digest,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

/** The public view of a token: everything but its digest. */
export function publicToken(t: TokenRecord): TokenRecord {
  return { id: t.id, name: t.name, role: t.role, createdAt: t.createdAt, revokedAt: t.revokedAt };
}

function get(ex: SqlExecutor, id: string): Promise<TokenRow | undefined> {
  return ex.get<TokenRow>(`SELECT ${COLUMNS} FROM api_tokens WHERE id = ?`, [id]);
}

export async function insertToken(engine: StoreEngine, token: StoredToken, actor: string): Promise<void> {
  await engine.transaction(async (tx) => {
    await tx.run(`INSERT INTO api_tokens (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`, [
      token.id,
      token.name,
      token.role,
      token.secretDigest,
      token.createdAt,
      null,
    ]);
    const body = { id: token.id, name: token.name, role: token.role };
    await appendEvidence(tx, {
      subject: `token:${token.id}`,
      type: 'token_created',
      body,
      at: token.createdAt,
      actor,
    });
  });
}

export async function findToken(engine: StoreEngine, id: string): Promise<StoredToken | undefined> {
  const row = await engine.read((ex) => get(ex, id));
  return row === undefined ? undefined : fromRow(row);
}

export async function listTokens(engine: StoreEngine): Promise<TokenRecord[]> {
  const rows = await engine.read((ex) =>
    ex.all<TokenRow>(`SELECT ${COLUMNS} FROM api_tokens ORDER BY created_at, id`),
  );
  return rows.map((r) => publicToken(fromRow(r)));
}

/** Revoke a token; revoking a revoked one returns it unchanged (no second event). */
export async function revokeToken(
  engine: StoreEngine,
  id: string,
  at: number,
  actor: string,
): Promise<TokenRecord> {
  return engine.transaction(async (tx) => {
    const row = await tx.get<TokenRow>(`SELECT ${COLUMNS} FROM api_tokens WHERE id = ?${tx.forUpdate}`, [id]);
    if (row === undefined) throw new BatonError('not_found', 'no such token', { id });
    const token = fromRow(row);
    if (token.revokedAt !== null) return publicToken(token);
    await tx.run('UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id]);
    await appendEvidence(tx, { subject: `token:${id}`, type: 'token_revoked', body: { id }, at, actor });
    return publicToken({ ...token, revokedAt: at });
  });
}

export async function hasActiveAdmin(engine: StoreEngine): Promise<boolean> {
  const row = await engine.read((ex) =>
    ex.get<{ n: number | string }>(
      "SELECT COUNT(*) AS n FROM api_tokens WHERE role = 'admin' AND revoked_at IS NULL",
    ),
  );
  return Number(row?.n ?? 0) > 0;
}

/** The executor credential with this secret digest (the occurrences service's own records). */
export async function findExecutorCredential(
  engine: StoreEngine,
  secretDigest: string,
): Promise<ExecutorCredentialRow | undefined> {
  const row = await engine.read((ex) =>
    ex.get<{ lineage: string; generation: number | string; retired_at: number | string | null }>(
      'SELECT lineage, generation, retired_at FROM aoc_credentials WHERE secret_digest = ?',
      [secretDigest],
    ),
  );
  if (row === undefined) return undefined;
  return {
    lineage: row.lineage,
    generation: Number(row.generation),
    retiredAt: row.retired_at === null ? null : Number(row.retired_at),
  };
}
