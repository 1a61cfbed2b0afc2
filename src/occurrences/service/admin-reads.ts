/**
 * Setup reads for operators and `baton apply`: every registered profile version and every
 * authority budget, each list in one consistent snapshot. A list is capped (`limit`, at most
 * MAX_LIST) and says when it was cut, so a caller never mistakes a partial list for the whole.
 */
import { BatonError } from '../../core/errors.js';
import type { AuthorityRecord } from '../model.js';
import type { ServiceContext } from './context.js';

export const MAX_LIST = 1000;

export interface ProfileSummary {
  readonly id: string;
  readonly version: string;
  readonly digest: string;
  readonly account: string;
  readonly environment: string;
  readonly registeredAt: number;
}

export interface Listed<T> {
  readonly items: readonly T[];
  readonly truncated: boolean;
}

function readLimit(limit: number | undefined): number {
  const n = limit ?? MAX_LIST;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_LIST) {
    throw new BatonError('input_invalid', `$.limit: must be between 1 and ${MAX_LIST}`, { path: '$.limit' });
  }
  return n;
}

function cut<T>(rows: readonly T[], n: number): Listed<T> {
  return { items: rows.slice(0, n), truncated: rows.length > n };
}

export async function listProfiles(ctx: ServiceContext, limit?: number): Promise<Listed<ProfileSummary>> {
  const n = readLimit(limit);
  const rows = await ctx.uow.read((repo) => repo.listProfiles(n + 1));
  const summaries = rows.map((p): ProfileSummary => ({
    id: p.id,
    version: p.version,
    digest: p.digest,
    account: p.document.account,
    environment: p.document.environment,
    registeredAt: p.registeredAt,
  }));
  return cut(summaries, n);
}

/** `after`: the budgets after that id only (the next page of `GET /v1/authorities`). */
export async function listAuthorities(
  ctx: ServiceContext,
  limit?: number,
  after?: string,
): Promise<Listed<AuthorityRecord>> {
  const n = readLimit(limit);
  return cut(await ctx.uow.read((repo) => repo.listAuthorities(n + 1, after)), n);
}
