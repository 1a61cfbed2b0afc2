/**
 * The folded PostgreSQL ceiling of the peer bench (issue 16 "Done when": "the measured ceiling
 * that stops it … PostgreSQL alone, in the same run"): the peer job with the least PostgreSQL work
 * Baton's guarantees need, ONE round trip per transition, plain `pg` from Node, no Baton code in
 * the loop (the schema is Baton's, migrated once; the rows are bench/floor.ts's seed):
 *
 * 1. create + reserve + bind + enter, one call of `ceiling_create_enter` (one statement,
 *    autocommit, synchronous_commit on): the credential authenticated (digest, not retired), the
 *    lineage locked at that generation (fencing), the occurrence inserted under the unique
 *    creation binding (a repeat is answered `existing`, never entered twice), the exclusive
 *    provider key under its unique index, the lineage's in-flight count and a domain stripe under
 *    their limits, the authority's budget consumed by compare-and-set, two evidence events chained
 *    (hashes computed here in Node, once) and the chain's head written.
 * 2. the payment call (the same sandbox, the same key rule as the other systems).
 * 3. settle, one call of `ceiling_settle`: the credential authenticated, the occurrence moved
 *    entered → resolved with the provider's reference under its unique index, the stripe released,
 *    three evidence events appended to the chain with a compare-and-set on its head. Here the
 *    outcome is the call's own 2xx; bench/peers/folded-status.ts settles it from the status query.
 *
 * Baton's perform makes create and enter one transaction too, so folding them is the least work,
 * not a shortcut. What it leaves out makes it cheaper than any Baton (hence an upper bound): no
 * status query (Baton settles from the provider's signed status, one more HTTP call: the sibling
 * ceiling in folded-status.ts adds it), no request validation, profile, JCS of arbitrary input, API
 * or authentication layer, and evidence bodies built from known keys in sorted order.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { migrate, openPostgresEngine } from '../../src/store/index.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../../src/store/postgres.js';
import { floorScripts, transactOnPostgres, type FloorExecutor } from '../floor.js';
import { ACCOUNT } from '../occurrences-fixtures.js';
import { pay, type Provider, type System } from './systems.js';

/** Stripes of the domain's open counts (migration 004 seeds 0…15) and each one's share of 1000. */
const STRIPES = 16;
const STRIPE_CAP = Math.ceil(1000 / STRIPES);
const LINEAGE_CAP = 1000;
const AMOUNT = 100;

/**
 * The two functions, with the account and environment the occurrence rows bind to (the folded
 * ceiling keeps the floor's; the status-query ceiling binds the sandbox's own, which it checks).
 */
const functions = (b: Binding) => `
CREATE FUNCTION ceiling_create_enter(p_digest text, p_id text, p_key text, p_authority text,
  p_request text, p_request_digest text, p_native_key text, p_linked text, p_exclusive text,
  p_stripe bigint, p_now bigint, p_types text[], p_bodies text[], p_prevs text[], p_hashes text[])
RETURNS text LANGUAGE plpgsql AS $$
DECLARE v_lineage text; v_generation bigint; v_open bigint; v_seq bigint;
BEGIN
  SELECT lineage, generation INTO v_lineage, v_generation FROM aoc_credentials
    WHERE secret_digest = p_digest AND retired_at IS NULL;
  IF NOT FOUND THEN RAISE EXCEPTION 'unauthenticated' USING ERRCODE = 'CEI01'; END IF;
  PERFORM 1 FROM aoc_lineages WHERE id = v_lineage AND generation = v_generation FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'generation retired' USING ERRCODE = 'CEI02'; END IF;
  INSERT INTO aoc_occurrences (id, lineage, creation_scope, creation_key, creation_digest, linked_ids,
    profile_id, profile_version, profile_digest, account, environment, request_digest, native_key_rule,
    native_key, request, captured_generation, entry_deadline, authority_id, authority_amount,
    authority_unit, phase, outcome, effect, conflict, entered_at, entered_generation, created_at,
    updated_at, version, open_stripe)
  VALUES (p_id, v_lineage, v_lineage, p_key, p_request_digest, p_linked, 'bench-payments', '1', 'pd',
    '${b.account}', '${b.environment}', p_request_digest, 'template', p_native_key, p_request, v_generation,
    p_now + 300000, p_authority, ${AMOUNT}, 'EUR-cents', 'entered', 'unknown', 'unresolved', 0, p_now,
    v_generation, p_now, p_now, 1, p_stripe)
  ON CONFLICT (creation_scope, creation_key) DO NOTHING;
  IF NOT FOUND THEN RETURN 'existing'; END IF;
  INSERT INTO aoc_linked_ids (occurrence_id, type, value, exclusive_key)
    VALUES (p_id, 'provider_key', p_native_key, p_exclusive);
  SELECT count(*) INTO v_open FROM aoc_occurrences WHERE phase = 'entered' AND lineage = v_lineage;
  IF v_open > ${LINEAGE_CAP} THEN RAISE EXCEPTION 'lineage limit' USING ERRCODE = 'CEI03'; END IF;
  UPDATE aoc_open_stripes SET in_flight = in_flight + 1 WHERE stripe = p_stripe AND in_flight < ${STRIPE_CAP};
  IF NOT FOUND THEN RAISE EXCEPTION 'domain limit' USING ERRCODE = 'CEI03'; END IF;
  UPDATE aoc_authorities SET consumed = consumed + ${AMOUNT}, updated_at = p_now, version = version + 1
    WHERE id = p_authority AND reserved + consumed + ${AMOUNT} <= total;
  IF NOT FOUND THEN RAISE EXCEPTION 'budget' USING ERRCODE = 'CEI04'; END IF;
  WITH ins AS (
    INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash)
    SELECT 'occurrence:' || p_id, u.i, u.t, u.b, p_now, 'ceiling', u.p, u.h
    FROM unnest(p_types, p_bodies, p_prevs, p_hashes) WITH ORDINALITY AS u(t, b, p, h, i)
    RETURNING seq)
  SELECT max(seq) INTO v_seq FROM ins;
  INSERT INTO evidence_heads (subject, head, count, last_seq)
    VALUES ('occurrence:' || p_id, p_hashes[cardinality(p_hashes)], cardinality(p_hashes), v_seq);
  RETURN 'entered';
END $$;
CREATE FUNCTION ceiling_settle(p_digest text, p_id text, p_reference text, p_exclusive text,
  p_now bigint, p_head text, p_count bigint, p_types text[], p_bodies text[], p_prevs text[], p_hashes text[],
  p_outcome text, p_effect text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE v_stripe bigint; v_seq bigint;
BEGIN
  PERFORM 1 FROM aoc_credentials WHERE secret_digest = p_digest AND retired_at IS NULL;
  IF NOT FOUND THEN RAISE EXCEPTION 'unauthenticated' USING ERRCODE = 'CEI01'; END IF;
  UPDATE aoc_occurrences SET phase = 'resolved', outcome = p_outcome, effect = p_effect,
    provider_reference = p_reference, resolved_at = p_now, updated_at = p_now, version = version + 1
    WHERE id = p_id AND phase = 'entered' AND (provider_reference IS NULL OR provider_reference = p_reference)
    RETURNING open_stripe INTO v_stripe;
  IF NOT FOUND THEN RAISE EXCEPTION 'not entered' USING ERRCODE = 'CEI05'; END IF;
  INSERT INTO aoc_linked_ids (occurrence_id, type, value, exclusive_key)
    VALUES (p_id, 'provider_reference', p_reference, p_exclusive);
  UPDATE aoc_open_stripes SET in_flight = in_flight - 1 WHERE stripe = v_stripe;
  WITH ins AS (
    INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash)
    SELECT 'occurrence:' || p_id, p_count + u.i, u.t, u.b, p_now, 'ceiling', u.p, u.h
    FROM unnest(p_types, p_bodies, p_prevs, p_hashes) WITH ORDINALITY AS u(t, b, p, h, i)
    RETURNING seq)
  SELECT max(seq) INTO v_seq FROM ins;
  UPDATE evidence_heads SET head = p_hashes[cardinality(p_hashes)], count = p_count + cardinality(p_hashes),
    last_seq = v_seq WHERE subject = 'occurrence:' || p_id AND head = p_head;
  IF NOT FOUND THEN RAISE EXCEPTION 'head moved' USING ERRCODE = 'CEI06'; END IF;
  RETURN 'resolved';
END $$`;

const CREATE_ENTER = {
  name: 'ceiling_create_enter',
  text: 'SELECT ceiling_create_enter($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) AS r',
};
const SETTLE = {
  name: 'ceiling_settle',
  text: 'SELECT ceiling_settle($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) AS r',
};

const sha = (text: string): string => `sha-256:${createHash('sha256').update(text).digest('base64url')}`;

/** A chain of events hashed as Baton's evidence log does: sha-256 of the JCS of the envelope. */
function chain(
  subject: string,
  at: number,
  prev: string | null,
  events: readonly (readonly [string, string])[],
) {
  const types: string[] = [];
  const bodies: string[] = [];
  const prevs: (string | null)[] = [];
  const hashes: string[] = [];
  let p = prev;
  for (const [type, body] of events) {
    const h = sha(
      `{"actor":"ceiling","at":${at},"body":${body},"prev":${JSON.stringify(p)},"subject":${JSON.stringify(subject)},"type":${JSON.stringify(type)}}`,
    );
    types.push(type);
    bodies.push(body);
    prevs.push(p);
    hashes.push(h);
    p = h;
  }
  return { types, bodies, prevs, hashes, head: p };
}

async function answer(pool: pg.Pool, q: { name: string; text: string }, values: unknown[], want: string) {
  const r = await pool.query<{ r: string }>({ ...q, values });
  if (r.rows[0]?.r !== want) throw new Error(`${q.name} answered ${String(r.rows[0]?.r)}`);
}

/** The account and environment an occurrence row binds (and its exclusive keys name). */
export interface Binding {
  readonly account: string;
  readonly environment: string;
}

/** What the settle statement records: the outcome, and the observation it comes from. */
export interface Settlement {
  readonly reference: string;
  readonly outcome: string;
  readonly effect: string;
  /** The `observation_recorded` event's body, JSON with its keys in sorted order (JCS). */
  readonly observation: string;
}

/** The occurrence as entered, for whatever decides its settlement. */
export interface Entered {
  readonly n: number;
  readonly nativeKey: string;
  readonly requestDigest: string;
  readonly enteredAt: number;
}

/** Where a ceiling's settlement comes from, once the payment call has returned. */
export type SettleFrom = (e: Entered) => Promise<Settlement>;

/** The folded ceiling's: the call returned 2xx, so it settles as succeeded (no status query). */
const fromTheCall: SettleFrom = (e) => {
  const reference = `pay_${String(e.n).padStart(8, '0')}`;
  return Promise.resolve({
    reference,
    outcome: 'success',
    effect: 'occurred',
    observation: `{"nativeStatus":"succeeded","observedAt":${Date.now()},"reference":"${reference}","result":"found"}`,
  });
};

interface Folded {
  readonly pool: pg.Pool;
  readonly binding: Binding;
  readonly settleFrom: SettleFrom;
  /** Prefix of occurrence ids, so two ceilings on one sandbox never share a native key. */
  readonly tag: string;
}

const exclusive = (b: Binding, value: string) =>
  `["bench-payments",${JSON.stringify(b.account)},${JSON.stringify(b.environment)},${JSON.stringify(value)}]`;

/** What the settle statement needs of an entered occurrence (the chain's head, the binding). */
export interface EnteredChain extends Entered {
  readonly id: string;
  readonly digest: string;
  readonly head: string;
}

/** The first transition: create + reserve + bind + enter, one statement. */
async function enterFolded(f: Folded, x: FloorExecutor, n: number): Promise<EnteredChain> {
  const id = `occ_${f.tag}_${n}`;
  const subject = `occurrence:${id}`;
  const digest = sha(x.credential); // the bearer credential is looked up by its digest, as Baton does
  const request = `{"amount":${AMOUNT},"currency":"eur","invoice":"peer-${n}","payee":"acme-supplies"}`;
  const requestDigest = sha(request);
  const nativeKey = `baton:floor-domain:${id}`;
  const now = Date.now();
  const created = `{"authority":{"amount":${AMOUNT},"id":${JSON.stringify(x.authority)}},"creationKey":"k-${n}","lineage":${JSON.stringify(x.lineage)},"nativeKey":${JSON.stringify(nativeKey)},"occurrence":"${id}","requestDigest":"${requestDigest}"}`;
  const entered = `{"attempt":1,"authority":{"consumed":${AMOUNT},"id":${JSON.stringify(x.authority)}},"generation":1,"requestDigest":"${requestDigest}"}`;
  const c = chain(subject, now, null, [
    ['occurrence_created', created],
    ['provider_entered', entered],
  ]);
  await answer(
    f.pool,
    CREATE_ENTER,
    [
      digest,
      id,
      `k-${n}`,
      x.authority,
      request,
      requestDigest,
      nativeKey,
      `[{"type":"provider_key","value":${JSON.stringify(nativeKey)}}]`,
      exclusive(f.binding, nativeKey),
      n % STRIPES,
      now,
      c.types,
      c.bodies,
      c.prevs,
      c.hashes,
    ],
    'entered',
  );
  return { n, id, digest, head: c.head ?? '', nativeKey, requestDigest, enteredAt: now };
}

/** The second transition: the settlement recorded, one statement. */
async function settleFolded(f: Folded, e: EnteredChain, settled: Settlement): Promise<void> {
  const at = Date.now();
  const s = chain(`occurrence:${e.id}`, at, e.head, [
    ['observation_recorded', settled.observation],
    ['provider_reference_bound', `{"providerReference":${JSON.stringify(settled.reference)}}`],
    [
      'state_changed',
      `{"from":{"phase":"entered"},"to":{"effect":"${settled.effect}","outcome":"${settled.outcome}","phase":"resolved"}}`,
    ],
  ]);
  await answer(
    f.pool,
    SETTLE,
    [
      e.digest,
      e.id,
      settled.reference,
      exclusive(f.binding, settled.reference),
      at,
      e.head,
      2,
      s.types,
      s.bodies,
      s.prevs,
      s.hashes,
      settled.outcome,
      settled.effect,
    ],
    'resolved',
  );
}

/** A folded ceiling's two transitions, for a caller that puts something between them (an HTTP hop). */
export interface FoldedTransitions {
  /** Create + reserve + bind + enter for executor `w`'s job `n`. */
  readonly enter: (w: number, n: number) => Promise<EnteredChain>;
  /** The settlement, from the ceiling's `settleFrom`, recorded; answers it. */
  readonly settle: (e: EnteredChain) => Promise<Settlement>;
  readonly close: () => Promise<void>;
}

/**
 * A folded ceiling's transitions on the (empty) database at `url`, with `workers` seeded
 * executors, settling each occurrence from `settleFrom` (bench/peers/folded-status.ts passes the
 * status query).
 */
export async function openFoldedTransitions(
  url: string,
  workers: number,
  how: { readonly binding: Binding; readonly settleFrom: SettleFrom; readonly tag: string },
): Promise<FoldedTransitions> {
  const engine = openPostgresEngine(url);
  try {
    await migrate(engine);
  } finally {
    await engine.close();
  }
  // synchronous_commit=on set by the server at connection start: every call's COMMIT is durable.
  // Idle connections kept as long as Baton's engine keeps them (src/store/postgres.ts): the
  // peer bench's rounds come back to a system after more than pg's default 10 s.
  const pool = new pg.Pool({
    connectionString: url,
    max: workers + 2,
    idleTimeoutMillis: DEFAULT_IDLE_TIMEOUT_MS,
    options: '-c synchronous_commit=on',
  });
  pool.on('error', () => undefined); // an idle client dropped by the server: the next query says so
  const seeded = await transactOnPostgres(pool, floorScripts.seed(workers));
  // The seed stores each credential's digest as given; the ceiling sends the digest of a secret.
  for (const x of seeded)
    await pool.query('UPDATE aoc_credentials SET secret_digest = $1 WHERE secret_digest = $2', [
      sha(x.credential),
      x.credential,
    ]);
  await pool.query(functions(how.binding));
  const folded: Folded = { pool, ...how };
  return {
    enter: (w, n) => {
      const x = seeded[w];
      if (x === undefined) return Promise.reject(new Error(`no executor ${w}`));
      return enterFolded(folded, x, n);
    },
    settle: async (e) => {
      const settled = await how.settleFrom(e);
      await settleFolded(folded, e, settled);
      return settled;
    },
    close: () => pool.end(),
  };
}

/** A folded ceiling as a system: two statements, the payment between them, then the settlement. */
export async function openFolded(
  name: string,
  p: Provider,
  url: string,
  workers: number,
  how: { readonly binding: Binding; readonly settleFrom: SettleFrom; readonly tag: string },
): Promise<System> {
  const t = await openFoldedTransitions(url, workers, how);
  return {
    name,
    job: async (w, n) => {
      const e = await t.enter(w, n);
      await pay(p, e.nativeKey, n);
      await t.settle(e);
    },
    close: t.close,
  };
}

export const FOLDED = 'ceiling: PostgreSQL folded';

/** The folded ceiling: settled from the call's own 2xx, no status query. */
export function foldedCeiling(p: Provider, url: string, workers: number): Promise<System> {
  return openFolded(FOLDED, p, url, workers, {
    binding: { account: ACCOUNT, environment: 'bench' },
    settleFrom: fromTheCall,
    tag: 'ceiling',
  });
}
