/**
 * create + reserve + bind, and its two relatives: reissue (a new occurrence for a released one)
 * and remedy (compensation, refund or replacement of an entered one). All three mint a NEW
 * occurrence under its own creation binding and authority reservation (AOC-REQ-008, -012).
 */
import { digestBytes } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import type { JsonObject } from '../../core/json.js';
import { readCreate, readReissue } from '../inputs.js';
import type { CreateFields } from '../inputs.js';
import type { Caller } from '../machine/common.js';
import { decideCreate, type CreateCommand } from '../machine/create.js';
import type { OccurrenceRecord } from '../model.js';
import type { OccurrenceInsert, OccurrencesRepository } from '../ports.js';
import type { OccurrenceView, ServiceContext } from './context.js';
import { appendAll, authenticate, decided, executorActor, requireDomain, view } from './context.js';

export interface CreateResult {
  readonly occurrence: OccurrenceView;
  /** False when the creation binding returned the original occurrence. */
  readonly created: boolean;
}

function insertRefusal(result: Exclude<OccurrenceInsert, { ok: true }>): BatonError {
  if (result.taken === 'linked_identifier') {
    return new BatonError('linked_identifier_conflict', 'this identifier already names another occurrence', {
      type: result.identifier.type,
    });
  }
  if (result.taken === 'creation_binding') {
    return new BatonError('creation_binding_conflict', 'the creation binding was taken concurrently; retry');
  }
  return new BatonError('provider_binding_conflict', 'the derived native key is already bound');
}

export type Build = (
  caller: Caller,
  repo: OccurrencesRepository,
  occurrenceId: string,
) => Promise<CreateCommand>;

/** What a plain create reads, known before its transaction (the engine may load it at once). */
interface Known {
  readonly creationKey: string;
  readonly authorityId: string;
}

async function runCreate(
  ctx: ServiceContext,
  credential: string,
  build: Build,
  workItemId: string | null = null,
  known?: Known,
): Promise<CreateResult> {
  const occurrenceId = ctx.ids.id('occ');
  return ctx.uow.run(async (repo) => {
    if (known !== undefined)
      await repo.prefetchCreate?.(digestBytes(credential), known.creationKey, known.authorityId);
    return createIn(ctx, repo, occurrenceId, credential, build, workItemId);
  });
}

/**
 * The create transition inside a transaction the caller opened: `runCreate` alone, or
 * create-and-enter (service/create-enter.ts) followed by the entry in the same transaction.
 */
export async function createIn(
  ctx: ServiceContext,
  repo: OccurrencesRepository,
  occurrenceId: string,
  credential: string,
  build: Build,
  workItemId: string | null,
): Promise<CreateResult> {
  const now = ctx.clock.wallMs();
  const domain = await requireDomain(repo);
  const caller = await authenticate(repo, credential);
  const lineage = await repo.lockLineage(caller.lineage);
  if (lineage === undefined) throw new BatonError('lineage_not_found', 'the credential names no lineage');
  const cmd = await build(caller, repo, occurrenceId);
  const linkId = cmd.remedy?.of ?? cmd.reissueOf;
  const profile = await repo.getProfile(cmd.profileId, cmd.profileVersion);
  const existing = await repo.findByCreationBinding(lineage.id, cmd.creationKey);
  const state = {
    domain,
    lineage,
    caller,
    profile,
    existing,
    link: linkId === null ? undefined : await repo.lockOccurrence(linkId),
    // Only a new reissue asks (a replay of the binding is decided before the link, decideCreate).
    reissuedAs:
      cmd.reissueOf === null || existing !== undefined ? undefined : await repo.findReissueOf(cmd.reissueOf),
    authority: await repo.lockAuthority(cmd.authority.id),
    counts: await repo.countOpen(lineage.id),
  };
  const d = decided(decideCreate(state, cmd, now));
  // Mission A3.6: a governed occurrence is linked to its running item (the gate refuses otherwise).
  const link = (id: string) =>
    workItemId === null ? undefined : repo.linkWorkItem(id, workItemId, lineage.id);
  if (d.kind === 'existing') {
    // A3.8 / C-A28: a retry's idempotency key resolves to the original; only a reserved one is relinked.
    if (d.occurrence.phase === 'reserved') await link(d.occurrence.id);
    return { occurrence: view(d.occurrence), created: false };
  }
  const inserted = await repo.insertOccurrence(d.occurrence, cmd.request, d.requestJcs);
  if (!inserted.ok) throw insertRefusal(inserted);
  await link(d.occurrence.id);
  await repo.updateAuthority(d.authority, state.authority?.version ?? 0);
  await appendAll(repo, d.events, now, executorActor(caller));
  return { occurrence: view(d.occurrence), created: true };
}

function command(f: CreateFields, occurrenceId: string, reissueOf: string | null = null): CreateCommand {
  return {
    occurrenceId,
    creationKey: f.creationKey,
    profileId: f.provider.profileId,
    profileVersion: f.provider.profileVersion,
    account: f.provider.account ?? null,
    environment: f.provider.environment ?? null,
    request: f.request,
    authority: f.authority,
    linkedIds: f.linkedIds,
    remedy: f.remedy,
    reissueOf,
  };
}

export async function create(ctx: ServiceContext, input: unknown): Promise<CreateResult> {
  const f = readCreate(input);
  // A remedy locks its linked occurrence between the binding and the authority: no prefetch then.
  const known = f.remedy === null ? { creationKey: f.creationKey, authorityId: f.authority.id } : undefined;
  return runCreate(ctx, f.credential, (_c, _r, id) => Promise.resolve(command(f, id)), f.workItemId, known);
}

/** The plain create's command builder, for create-and-enter (one transaction for both). */
export function createBuild(f: CreateFields): Build {
  return (_c, _r, id) => Promise.resolve(command(f, id));
}

/**
 * AOC-REQ-012: a remedy is its own occurrence, linked to the original, which never changes. Given
 * a work item it is governed as a create is (A3.6): checked at create and gated at entry.
 */
export async function remedy(ctx: ServiceContext, input: unknown): Promise<CreateResult> {
  const f = readCreate(input, true);
  return runCreate(ctx, f.credential, (_c, _r, id) => Promise.resolve(command(f, id)), f.workItemId);
}

/** AOC-REQ-008: after a release, the domain mints a NEW occurrence linked to the tombstone. */
export async function reissue(ctx: ServiceContext, input: unknown): Promise<CreateResult> {
  const f = readReissue(input);
  return runCreate(
    ctx,
    f.credential,
    async (_caller, repo, id) => {
      const source = await repo.lockOccurrence(f.occurrenceId);
      const request = source && (await repo.getRequest(source.id));
      if (source === undefined || request === undefined) {
        throw new BatonError('occurrence_not_found', 'no such occurrence');
      }
      return reissueCommand(source, request, f.creationKey, f.linkedIds, id);
    },
    f.workItemId,
  );
}

function reissueCommand(
  source: OccurrenceRecord,
  request: JsonObject,
  creationKey: string,
  linkedIds: CreateFields['linkedIds'],
  occurrenceId: string,
): CreateCommand {
  return {
    occurrenceId,
    creationKey,
    profileId: source.provider.profileId,
    profileVersion: source.provider.profileVersion,
    account: null,
    environment: null,
    request,
    authority: { id: source.authority.id, amount: source.authority.amount },
    linkedIds,
    remedy: null,
    reissueOf: source.id,
  };
}
