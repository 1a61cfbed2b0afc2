/**
 * Console sessions (migration 011, docs/console.md "Sign-in"). A session belongs to one admin or
 * operator token; it is live only while it has not expired, has not been ended (sign-out) and its
 * token is not revoked — checked in the same read that finds it, so a revoked token ends all of
 * its sessions at once, with no second write to forget. Only secret digests are stored.
 */
import { BatonError } from '../core/errors.js';
import type { StoreEngine } from './engine.js';
import { appendEvidence } from './evidence-log.js';
import { PRINCIPAL_ROLES, type PrincipalRole } from './principals.js';

export interface SessionRecord {
  readonly id: string;
  readonly tokenId: string;
  readonly role: PrincipalRole;
  readonly name: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

interface SessionRow {
  id: string;
  token_id: string;
  role: string;
  name: string;
  created_at: number | string;
  expires_at: number | string;
}

export async function insertSession(
  engine: StoreEngine,
  session: Omit<SessionRecord, 'role' | 'name'> & { readonly secretDigest: string },
  actor: string,
): Promise<void> {
  await engine.transaction(async (tx) => {
    await tx.run(
      'INSERT INTO console_sessions (id, secret_digest, token_id, created_at, expires_at, ended_at) VALUES (?, ?, ?, ?, ?, NULL)',
      [session.id, session.secretDigest, session.tokenId, session.createdAt, session.expiresAt],
    );
    // The sign-in is evidence of who held the console, under the token's own subject.
    await appendEvidence(tx, {
      subject: `token:${session.tokenId}`,
      type: 'session_started',
      body: { session: session.id, expiresAt: session.expiresAt },
      at: session.createdAt,
      actor,
    });
  });
}

/** The live session with this secret digest, or undefined (expired, ended, revoked, unknown). */
export async function findLiveSession(
  engine: StoreEngine,
  secretDigest: string,
  now: number,
): Promise<SessionRecord | undefined> {
  const row = await engine.read((ex) =>
    ex.get<SessionRow>(
      `SELECT s.id, s.token_id, t.role, t.name, s.created_at, s.expires_at
         FROM console_sessions s JOIN api_tokens t ON t.id = s.token_id
        WHERE s.secret_digest = ? AND s.ended_at IS NULL AND t.revoked_at IS NULL AND s.expires_at > ?`,
      [secretDigest, now],
    ),
  );
  if (row === undefined) return undefined;
  if (!(PRINCIPAL_ROLES as readonly string[]).includes(row.role)) {
    throw new BatonError('store_corrupt', 'a session token has an unknown role', { id: row.id });
  }
  return {
    id: row.id,
    tokenId: row.token_id,
    role: row.role as PrincipalRole,
    name: row.name,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

/** Sign-out: end the session (idempotent: ending an ended session changes nothing). */
export async function endSession(engine: StoreEngine, id: string, at: number, actor: string): Promise<void> {
  await engine.transaction(async (tx) => {
    const row = await tx.get<{ token_id: string }>(
      `SELECT token_id FROM console_sessions WHERE id = ? AND ended_at IS NULL${tx.forUpdate}`,
      [id],
    );
    if (row === undefined) return;
    await tx.run('UPDATE console_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL', [at, id]);
    await appendEvidence(tx, {
      subject: `token:${row.token_id}`,
      type: 'session_ended',
      body: { session: id },
      at,
      actor,
    });
  });
}
