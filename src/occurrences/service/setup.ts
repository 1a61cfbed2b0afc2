/**
 * Domain setup commands: configure the domain, register provider profiles, create authority
 * budgets, and takeover (AOC-REQ-001, -005, -006). Each runs in one transaction.
 */
import { digestBytes } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import { canonicalize } from '../../core/jcs.js';
import type { AuthorityInput } from '../inputs.js';
import { readAuthorityInput, readDomainConfig, readTakeover } from '../inputs.js';
import { event } from '../machine/common.js';
import { checkExpectedGeneration, decideTakeover } from '../machine/takeover.js';
import type { AuthorityRecord, DomainRecord } from '../model.js';
import { profileDigest, validateProfile } from '../profile.js';
import type { RegisteredProfile } from '../profile-types.js';
import type { HeldWorkItem, OccurrencesRepository } from '../ports.js';
import type { OccurrenceView, ServiceContext } from './context.js';
import { appendAll, fail, view } from './context.js';

export async function configureDomain(
  ctx: ServiceContext,
  input: unknown,
  actor: string,
): Promise<DomainRecord> {
  const cfg = readDomainConfig(input);
  return ctx.uow.run(async (repo) => {
    const now = ctx.clock.wallMs();
    const current = await repo.lockDomain();
    const facts = {
      id: cfg.id,
      kid: ctx.domainKey.kid,
      limits: { ...cfg.limits },
      bypassPaths: cfg.bypassPaths.map((p) => ({ ...p })),
    };
    if (current === undefined) {
      const domain: DomainRecord = {
        ...facts,
        publicKey: ctx.domainKey.publicKey,
        createdAt: now,
        updatedAt: now,
        version: 1,
      };
      await repo.insertDomain(domain);
      await appendAll(repo, [event(`domain:${cfg.id}`, 'domain_configured', facts)], now, actor);
      return domain;
    }
    if (
      current.id !== cfg.id ||
      current.kid !== ctx.domainKey.kid ||
      current.publicKey !== ctx.domainKey.publicKey
    ) {
      throw new BatonError('domain_conflict', 'this database belongs to another domain id or domain key');
    }
    const same =
      canonicalize({ l: current.limits, b: current.bypassPaths }) ===
      canonicalize({ l: cfg.limits, b: cfg.bypassPaths });
    if (same) return current;
    const domain: DomainRecord = {
      ...current,
      limits: cfg.limits,
      bypassPaths: cfg.bypassPaths,
      updatedAt: now,
      version: current.version + 1,
    };
    await repo.updateDomain(domain, current.version);
    await appendAll(repo, [event(`domain:${cfg.id}`, 'domain_configured', facts)], now, actor);
    return domain;
  });
}

/** Profiles are pinned by digest and immutable once registered: same (id, version) must be the same document. */
export async function registerProfile(
  ctx: ServiceContext,
  document: unknown,
  actor: string,
): Promise<RegisteredProfile> {
  const profile = validateProfile(document);
  const digest = profileDigest(profile);
  return ctx.uow.run(async (repo) => {
    const existing = await repo.getProfile(profile.id, profile.version);
    if (existing !== undefined) return sameProfile(existing, digest);
    const now = ctx.clock.wallMs();
    const registered: RegisteredProfile = {
      id: profile.id,
      version: profile.version,
      digest,
      document: profile,
      registeredAt: now,
    };
    if (!(await repo.insertProfile(registered))) {
      return sameProfile(await mustGetProfile(repo, profile.id, profile.version), digest);
    }
    const body = {
      id: profile.id,
      version: profile.version,
      digest,
      account: profile.account,
      environment: profile.environment,
    };
    await appendAll(
      repo,
      [event(`profile:${profile.id}@${profile.version}`, 'profile_registered', body)],
      now,
      actor,
    );
    return registered;
  });
}

function sameProfile(existing: RegisteredProfile, digest: string): RegisteredProfile {
  if (existing.digest !== digest) {
    throw new BatonError(
      'profile_conflict',
      'this profile id and version are registered with another document',
      {
        id: existing.id,
        version: existing.version,
      },
    );
  }
  return existing;
}

async function mustGetProfile(
  repo: OccurrencesRepository,
  id: string,
  version: string,
): Promise<RegisteredProfile> {
  const p = await repo.getProfile(id, version);
  if (p === undefined)
    throw new BatonError('internal', 'a profile insert was refused but no profile is there');
  return p;
}

export async function createAuthority(
  ctx: ServiceContext,
  input: unknown,
  actor: string,
): Promise<AuthorityRecord> {
  const a: AuthorityInput = readAuthorityInput(input);
  return ctx.uow.run(async (repo) => {
    const existing = await repo.lockAuthority(a.id);
    if (existing !== undefined) {
      if (existing.unit !== a.unit || existing.total !== a.total) {
        throw new BatonError(
          'authority_conflict',
          'an authority budget with this id already exists with other terms',
        );
      }
      return existing;
    }
    const now = ctx.clock.wallMs();
    const record: AuthorityRecord = {
      ...a,
      reserved: 0,
      consumed: 0,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    if (!(await repo.insertAuthority(record)))
      throw new BatonError('authority_conflict', 'the authority id is taken');
    await appendAll(repo, [event(`authority:${a.id}`, 'authority_created', { ...a })], now, actor);
    return record;
  });
}

export interface TakeoverResult {
  readonly lineage: string;
  readonly generation: number;
  readonly retiredGeneration: number | null;
  /** The successor's credential, shown once; only its digest is stored. */
  readonly credential: string;
  /** AOC-REQ-005: the successor's first answer is the lineage's open work. */
  readonly reserved: readonly OccurrenceView[];
  readonly unresolved: readonly OccurrenceView[];
  /** Mission build spec A6: the lineage's held harness items (paused, suppressed, handed off). */
  readonly held: readonly HeldWorkItem[];
  /** More held items than the answer lists (at most 1,000): `GET /v1/harness/items` has them all. */
  readonly heldMore: boolean;
}

export async function takeover(ctx: ServiceContext, input: unknown, actor: string): Promise<TakeoverResult> {
  const { lineage: lineageId, expectedGeneration } = readTakeover(input);
  const secret = ctx.ids.secret();
  return ctx.uow.run(async (repo) => {
    const now = ctx.clock.wallMs();
    const domain = await repo.lockDomain();
    if (domain === undefined)
      throw new BatonError('domain_not_found', 'the coordination domain is not configured');
    const previous = await repo.lockLineage(lineageId);
    // Under the lock, not before it: a read outside the transaction would let racers all pass.
    const refused = checkExpectedGeneration(lineageId, previous, expectedGeneration);
    if (refused !== undefined) fail(refused);
    const open = await repo.listOccurrences({ lineage: lineageId, phases: ['reserved', 'entered'] });
    const reserved = open.filter((o) => o.phase === 'reserved');
    const unresolved = open.filter((o) => o.phase === 'entered');
    const delivered = { reserved: reserved.map((o) => o.id), unresolved: unresolved.map((o) => o.id) };
    const d = decideTakeover(
      { lineage: previous, open: delivered },
      { lineageId, secretDigest: digestBytes(secret) },
      now,
    );
    if (previous === undefined) await repo.insertLineage(d.lineage);
    else await repo.updateLineage(d.lineage, previous.version);
    // Retire the predecessor BEFORE the successor can be admitted (AOC-REQ-006).
    await repo.retireCredentials(lineageId, d.lineage.generation, now);
    if (!(await repo.insertCredential(d.credential)))
      throw new BatonError('conflict', 'a credential for this generation exists');
    await appendAll(repo, d.events, now, actor);
    // The handover index, beside the event that lists the same ids: an occurrence's handovers are
    // then found by its key, not by reading the lineage's whole chain (GET /v1/occurrences/{id}).
    await repo.recordHandovers(lineageId, d.lineage.generation, [
      ...delivered.reserved,
      ...delivered.unresolved,
    ]);
    const held = await repo.heldWorkItems(lineageId);
    return {
      lineage: lineageId,
      generation: d.lineage.generation,
      retiredGeneration: d.retiredGeneration,
      credential: secret,
      reserved: reserved.map(view),
      unresolved: unresolved.map(view),
      held: held.items,
      heldMore: held.more,
    };
  });
}
