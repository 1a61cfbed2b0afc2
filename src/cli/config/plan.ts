/**
 * Plan, then apply (docs/config.md "Idempotency"). The plan reads what the target already holds
 * and decides every item — create, update (a domain, an issuer's stream bearer, a producer's keys),
 * remove (a producer's pin), unchanged — or refuses it as
 * a conflict. Any conflict refuses the whole config with `config_conflict` before the first write,
 * so a bad file changes nothing. Writes go in order (domain, profiles, authorities, issuers,
 * producers, tokens) and are each idempotent on the server, so re-running after an interrupted
 * apply converges. Tokens are matched by name among unrevoked tokens and never re-minted: a token
 * that exists is `unchanged`. A plan with an admin-only write (the domain, an issuer, a producer, a
 * token) is refused `forbidden` before the first write when the target's token is not an admin's,
 * so an operator's apply never stops half-way; so is a `tokens` section, which an operator cannot
 * even compare (listing tokens is admin-only).
 */
import { BatonError } from '../../core/errors.js';
import { canonicalize } from '../../core/jcs.js';
import type { JsonObject } from '../../core/json.js';
import type { AuthorityInput, DomainConfigInput } from '../../occurrences/index.js';
import type { CreatedPrincipalToken, PrincipalToken } from '../../client/index.js';
import type { BatonConfig, TokenEntry } from './model.js';
import type { LoadedProfile } from './profiles.js';
import { tokensIfAdmin, type SetupTarget } from './target.js';
import type { LoadedIssuer } from './issuers.js';
import type { LoadedProducer } from './producers.js';

/** `remove`: only a producer entry with no keys, whose producer is pinned (docs/config.md). */
export type Action = 'create' | 'update' | 'remove' | 'unchanged';

export interface PlannedItem {
  readonly kind: 'domain' | 'profile' | 'authority' | 'token' | 'issuer' | 'producer';
  /** domain id, `profileId@version`, authority id, token name, issuer or producer id. */
  readonly id: string;
  readonly action: Action;
}

export interface Conflict {
  readonly kind: PlannedItem['kind'];
  readonly id: string;
  readonly reason: string;
}

/** One write of the plan, and the item it carries out (reported once it is done). */
export interface Step {
  readonly item: PlannedItem;
  readonly write: () => Promise<CreatedPrincipalToken | undefined>;
}

export interface Plan {
  readonly items: readonly PlannedItem[];
  readonly run: readonly Step[];
  /** The target's tokens as read for the plan ([] when the config has no `tokens`). */
  readonly tokens: readonly PrincipalToken[];
}

async function planDomain(t: SetupTarget, d: DomainConfigInput, conflicts: Conflict[]): Promise<Action> {
  const current = await t.getDomain();
  if (current === undefined) return 'create';
  if (current.id !== d.id) {
    conflicts.push({ kind: 'domain', id: d.id, reason: `the server's domain is ${current.id}` });
    return 'unchanged';
  }
  const same =
    canonicalize({ l: current.limits, b: byKind(current.bypassPaths) }) ===
    canonicalize({ l: d.limits, b: byKind(d.bypassPaths) });
  return same ? 'unchanged' : 'update';
}

/** `bypassPaths` is a set (each kind once): its order is no change. */
function byKind<T extends { readonly kind: string }>(paths: readonly T[]): T[] {
  return [...paths].sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
}

async function planProfile(t: SetupTarget, p: LoadedProfile, conflicts: Conflict[]): Promise<Action> {
  const current = await t.getProfile(p.id, p.version);
  if (current === undefined) return 'create';
  if (current.digest !== p.digest) {
    conflicts.push({
      kind: 'profile',
      id: `${p.id}@${p.version}`,
      reason: 'registered with another document (profiles are immutable: give the new one a new version)',
    });
  }
  return 'unchanged';
}

async function planAuthority(t: SetupTarget, a: AuthorityInput, conflicts: Conflict[]): Promise<Action> {
  const current = await t.getAuthority(a.id);
  if (current === undefined) return 'create';
  if (current.unit !== a.unit)
    conflicts.push({ kind: 'authority', id: a.id, reason: `exists with unit ${current.unit}` });
  else if (current.total !== a.total)
    conflicts.push({ kind: 'authority', id: a.id, reason: `exists with total ${current.total}` });
  return 'unchanged';
}

/**
 * Pins are immutable: another pin is a conflict. The stream bearer is not: the same pin with
 * another push bearer or poll bearer reference is `update`, written through the bearer route
 * (how a leaked or scheduled-out bearer is rotated, docs/missions.md "Rotating the stream bearer").
 */
async function planIssuer(t: SetupTarget, l: LoadedIssuer, conflicts: Conflict[]): Promise<Action> {
  const current = await t.getIssuer(l.issuer);
  if (current === undefined) return 'create';
  const r = l.registration;
  // The pins compared, not their digests: a pin migration 035 rewrote keeps its registered digest.
  if (canonicalize(asJson(current.pin)) !== canonicalize(asJson(r.pin))) {
    const differs = firstDifference(asJson(current.pin), asJson(r.pin), '');
    const reason = `pinned with another pin (pins are immutable)${differs === undefined ? '' : `: ${differs}`}`;
    conflicts.push({ kind: 'issuer', id: l.issuer, reason });
    return 'unchanged';
  }
  // An operator is not shown the push bearer's digest (docs/api.md), only whether one is set: with
  // none set and none in the file the bearer is the same; with one set it cannot tell the same bearer
  // from another, so the bearer is planned as replaced, which needs an admin (refused before any
  // write, as every admin-only write is); an admin replacing it with the same one is unchanged.
  const pushDigest =
    current.pushBearerDigest === undefined && !current.pushBearer ? null : current.pushBearerDigest;
  const same = pushDigest === r.bearerDigest && current.pollBearerRef === r.pollBearerRef;
  return same ? 'unchanged' : 'update';
}

/** As it travels (a member left undefined is absent), so the two pins compare alike. */
const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null)) as unknown;

/**
 * Where two pins first differ, `member: held vs file's` (e.g. a relative `file:` key_ref made
 * absolute against another checkout's folder), so a conflict says what to look at.
 */
function firstDifference(held: unknown, file: unknown, at: string): string | undefined {
  if (canonicalize(held ?? null) === canonicalize(file ?? null)) return undefined;
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObject(held) && isObject(file)) {
    for (const key of [...new Set([...Object.keys(held), ...Object.keys(file)])].sort()) {
      const found = firstDifference(held[key], file[key], at === '' ? key : `${at}.${key}`);
      if (found !== undefined) return found;
    }
  }
  const show = (v: unknown): string => (typeof v === 'string' ? v : canonicalize(v ?? null));
  return `${at === '' ? 'pin' : at}: ${show(held)} vs ${show(file)}`;
}

/** The body of `PUT /v1/missions/issuers/{issuer}/bearer`: the one bearer member of the registration. */
function bearerBody(l: LoadedIssuer): JsonObject {
  const { pushBearer, pollBearerRef } = l.body;
  return {
    ...(pushBearer !== undefined && { pushBearer }),
    ...(pollBearerRef !== undefined && { pollBearerRef }),
  };
}

/**
 * A producer's pin is the file's key set: the same keys are unchanged, other keys replace them
 * (`update`: how a key is rotated), no keys remove the pin. Never a conflict: pinning is the
 * operator's decision, and the evidence log keeps every earlier key set.
 */
async function planProducer(t: SetupTarget, l: LoadedProducer): Promise<Action> {
  const current = await t.getProducer(l.producer);
  if (l.keys.length === 0) return current === undefined ? 'unchanged' : 'remove';
  if (current === undefined) return 'create';
  return current.keysDigest === l.keysDigest ? 'unchanged' : 'update';
}

function planToken(
  existing: readonly { name: string; role: string; revokedAt: number | null }[],
  e: TokenEntry,
  conflicts: Conflict[],
): Action {
  const live = existing.filter((x) => x.name === e.name && x.revokedAt === null);
  if (live.length === 0) return 'create';
  if (!live.every((x) => x.role === e.role))
    conflicts.push({ kind: 'token', id: e.name, reason: `an unrevoked token of this name has another role` });
  return 'unchanged';
}

export async function plan(
  t: SetupTarget,
  config: BatonConfig,
  profiles: readonly LoadedProfile[],
  issuers: readonly LoadedIssuer[] = [],
  producers: readonly LoadedProducer[] = [],
): Promise<Plan> {
  const conflicts: Conflict[] = [];
  const items: PlannedItem[] = [];
  const run: Step[] = [];
  const step = (item: PlannedItem, write: () => Promise<unknown>): void => {
    items.push(item);
    if (item.action !== 'unchanged')
      run.push({
        item,
        write: async () => {
          await write();
          return undefined;
        },
      });
  };
  const d = config.domain;
  if (d !== undefined)
    step({ kind: 'domain', id: d.id, action: await planDomain(t, d, conflicts) }, () => t.configureDomain(d));
  for (const p of profiles) {
    const action = await planProfile(t, p, conflicts);
    step({ kind: 'profile', id: `${p.id}@${p.version}`, action }, () => t.registerProfile(p.document));
  }
  for (const a of config.authorities) {
    step({ kind: 'authority', id: a.id, action: await planAuthority(t, a, conflicts) }, () =>
      t.createAuthority(a),
    );
  }
  for (const l of issuers) {
    const action = await planIssuer(t, l, conflicts);
    step({ kind: 'issuer', id: l.issuer, action }, () =>
      action === 'update' ? t.replaceIssuerBearer(l.issuer, bearerBody(l)) : t.pinIssuer(l.body),
    );
  }
  for (const l of producers) {
    const action = await planProducer(t, l);
    step({ kind: 'producer', id: l.producer, action }, () =>
      action === 'remove' ? t.unpinProducer(l.producer) : t.pinProducer(l.producer, l.keys),
    );
  }
  // Listing tokens is admin-only: without an admin's token the `tokens` section cannot be compared,
  // so its items are neither `unchanged` nor `create` — they are refused below, never skipped. The
  // one read answers whether the token may administer too.
  const listed = config.tokens.create.length === 0 ? undefined : await tokensIfAdmin(t);
  const blind = config.tokens.create.length > 0 && listed === undefined;
  const tokens = listed ?? [];
  // Asked once, and only when a plan needs to know (known already when the tokens were read).
  let admin: Promise<boolean> | undefined =
    config.tokens.create.length === 0 ? undefined : Promise.resolve(!blind);
  const mayAdminister = (): Promise<boolean> => (admin ??= t.mayAdminister());
  const unread: Pick<PlannedItem, 'kind' | 'id'>[] = [];
  for (const e of config.tokens.create) {
    if (blind) {
      unread.push({ kind: 'token', id: e.name });
      continue;
    }
    const item: PlannedItem = { kind: 'token', id: e.name, action: planToken(tokens, e, conflicts) };
    items.push(item);
    if (item.action === 'create') run.push({ item, write: () => t.createToken(e) });
  }
  if (conflicts.length > 0) {
    const list = conflicts.map((c) => `${c.kind} ${c.id}: ${c.reason}`).join('; ');
    throw new BatonError('config_conflict', `nothing applied: ${list}`, { conflicts });
  }
  await refuseAdminWritesWithout(mayAdminister, items, unread);
  return { items, run, tokens };
}

const ADMIN_ONLY: ReadonlySet<PlannedItem['kind']> = new Set(['domain', 'issuer', 'producer', 'token']);

/**
 * An admin-only write in the plan, or a `tokens` item an operator could not even read, needs an
 * admin's token: asked once, before anything is written, so an operator's apply never stops
 * half-way (docs/config.md).
 */
async function refuseAdminWritesWithout(
  mayAdminister: () => Promise<boolean>,
  items: readonly PlannedItem[],
  unread: readonly Pick<PlannedItem, 'kind' | 'id'>[],
): Promise<void> {
  const writes = items.filter((i) => i.action !== 'unchanged' && ADMIN_ONLY.has(i.kind));
  const needs = [...writes, ...unread];
  if (needs.length === 0 || (unread.length === 0 && (await mayAdminister()))) return;
  const list = needs.map((i) => `${i.kind} ${i.id}`).join(', ');
  const why = unread.length === 0 ? '' : ' (tokens are listed and minted by an admin only)';
  throw new BatonError('forbidden', `nothing applied: ${list} need an admin token${why}`, {
    items: needs.map((i) => ({ kind: i.kind, id: i.id })),
  });
}

/**
 * Run the plan's writes in order. Each minted token goes to `keep` before the next write: a later
 * write that fails must not take a secret already minted with it (it is never shown again). Each
 * write done goes to `applied` as it completes, so a failure part-way can say what it left behind.
 */
export async function execute(
  p: Plan,
  keep: (token: CreatedPrincipalToken) => Promise<void>,
  applied: PlannedItem[],
): Promise<void> {
  for (const { item, write } of p.run) {
    const token = await write();
    applied.push(item);
    if (token !== undefined) await keep(token);
  }
}
