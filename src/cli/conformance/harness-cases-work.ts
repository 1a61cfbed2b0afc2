/**
 * A7 #17, #18, #20, #23–#25: child bindings, sub-agent stop propagation, concurrency on one item,
 * the stop matrix (and `baton serve` refusing it), supersession and rebind, the anchors and the
 * issuer's own table (A7#19, the cache, is harness-cases-cache.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CLIENT_ASSERTION_TYPE,
  clientAssertion,
  DEFAULT_MATRIX,
  missionAnchor,
  parseAnchor,
  parseMatrix,
} from '../../missions/index.js';
import { isBatonError } from '../../core/errors.js';
import type { JsonObject } from '../../core/json.js';
import type { CaseDefinition } from './case.js';
import { AUTHORITY_SET, INTENT } from './harness-env.js';
import type { HarnessKit } from './harness-kit.js';

type HarnessCase = CaseDefinition<HarnessKit>;

const NONCE = 'nonce_K9pV4nT2sR7mB1xQ';

/** One Status request as the client would send it, answered raw: status, headers that matter, bytes. */
async function rawStatus(kit: HarnessKit, mission: string) {
  const { pin, clientKey, clock } = kit.env;
  const body = new URLSearchParams({
    mission,
    audience: pin.audience,
    nonce: NONCE,
    client_assertion_type: CLIENT_ASSERTION_TYPE,
    client_assertion: await clientAssertion(clientKey, pin.client.client_id, pin.issuer, clock.wallMs()),
  });
  const r = await fetch(pin.endpoints.status, { method: 'POST', body, signal: AbortSignal.timeout(10_000) });
  return {
    status: r.status,
    type: r.headers.get('content-type'),
    length: r.headers.get('content-length'),
    cache: r.headers.get('cache-control'),
    body: await r.text(),
  };
}

/** `baton serve --stop-matrix FILE` as a child process (A3.10): its exit code and stderr. */
async function serveWithMatrix(matrix: string) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-harness-serve-'));
  try {
    const file = join(dir, 'matrix.json');
    const db = join(dir, 'baton.db');
    writeFileSync(file, matrix);
    const main = fileURLToPath(new URL('../main.js', import.meta.url));
    const args = [main, 'serve', '--db', db, '--port', '0', '--stop-matrix', file];
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, args, { timeout: 30_000 }, (error, _out, err) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          stderr: err,
        }),
      );
    });
    return { code, stderr, dbCreated: existsSync(db) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const INTENT_HASH = 'sha-256:P38IRTmTaUESJ5RpCw1WXmIqfsQmYek7zxiQWERcq-E';
const AUTHORITY_HASH = 'sha-256:-rBZZJ8tVIyGoR1tBg6BO6QG0kimVvef8vjigpoVuPw';

function handle(kit: HarnessKit, parentMission: string, kind: string, mission?: JsonObject): JsonObject {
  return {
    actor: { client_id: kit.name('agent') },
    parent_mission: { id: parentMission, origin: kit.env.pin.issuer },
    governed_by: { kind, ...(mission !== undefined && { mission }) },
  };
}

export const WORK_CASES: readonly HarnessCase[] = [
  {
    id: 'HAR-CASE-017',
    title:
      'A7#17 a child under another Mission without a recorded relation, or a wider binding, is mission_binding_invalid',
    requirements: ['HAR-04', 'HAR-05'],
    inputs: { children: ['other mission, no relation', 'wider binding'] },
    async run(kit) {
      const m = await kit.mission();
      const other = await kit.mission();
      const parent = await kit.enqueue(m, {
        mission_binding: kit.binding(m, { authority_hash: AUTHORITY_HASH }) as unknown as JsonObject,
      });
      await kit.refused(
        'a child under another Mission with no relation',
        kit.enqueue(other, { parent_item: parent.id }),
        'mission_binding_invalid',
      );
      await kit.refused(
        'a child dropping the parent authority_hash (wider)',
        kit.enqueue(m, { parent_item: parent.id }),
        'mission_binding_invalid',
      );
    },
  },
  {
    id: 'HAR-CASE-018',
    title:
      'A7#18 a parent revocation stops dependent sub-agents; an independent active child continues; a fake independent one stops',
    requirements: ['HAR-20', 'HAR-21', 'HAR-22', 'HAR-23'],
    inputs: { handles: ['parent_mission', 'independent_mission', 'independent_mission with parent'] },
    async run(kit) {
      const m = await kit.mission();
      const indep = await kit.mission();
      const fake = await kit.mission();
      const origin = kit.env.pin.issuer;
      const parent = await kit.enqueue(m);
      const sub = (kind: string, mission?: { id: string } & JsonObject) =>
        kit.enqueue(m, {
          kind: 'subagent_handle',
          parent_item: parent.id,
          ...(mission !== undefined && {
            mission_binding: kit.binding(mission.id) as unknown as JsonObject,
          }),
          handle: handle(kit, m, kind, mission),
        });
      const dependent = await sub('parent_mission');
      const independent = await sub('independent_mission', { id: indep, origin });
      const pretend = await sub('independent_mission', { id: fake, origin, parent: { id: m, origin } });
      await kit.operate(m, 'revoke');
      const states = await Promise.all(
        [dependent, independent, pretend].map(async (i) => (await kit.item(i.id)).state),
      );
      kit.check(
        `dependent stopped, independent queued, fake stopped (${states.join(', ')})`,
        states.join() === 'suppressed,queued,suppressed',
      );
      const d = await kit.evidence(dependent.id);
      const i = await kit.evidence(independent.id);
      kit.check(
        'subagent_stopped for the dependent child',
        d.some((x) => x.event_type === 'subagent_stopped'),
      );
      kit.check(
        'subagent_continued / independent_mission_active for the independent child',
        i.some((x) => x.event_type === 'subagent_continued' && x.reason === 'independent_mission_active'),
      );
    },
  },
  {
    id: 'HAR-CASE-020',
    title:
      'A7#20 100 concurrent dispatch/requeue/stop calls on queued items: one winner per version, never running after a committed stop, no entry after a committed revocation',
    requirements: ['HAR-28', 'HAR-24', 'AOC-REQ-008'],
    inputs: {
      concurrent: 100,
      items: 25,
      perItem: ['dispatch', 'stop', 'requeue', 'dispatch'],
      order: 'dispatch first on even items, stop first on odd ones',
      revocation: 'revoke raced with enters, then an enter after the committed revocation',
    },
    async run(kit) {
      const m = await kit.mission();
      const h = kit.env.harness;
      const e = await kit.executor(kit.name('lineage'));
      const items = [];
      for (let i = 0; i < 25; i++) items.push(await kit.enqueue(m, { lineage: e.lineage }));
      // A7#20 (HAR-28): 100 concurrent calls on queued items. A dispatch first refreshes
      // Status outside its transaction, so a stop issued at the same instant always wins (on both
      // engines): on odd items stop and dispatch start together (stop commits first, the dispatch
      // meets a suppressed item); on even items the stop starts once the first dispatch settled
      // (dispatch won) and then races a requeue and a second dispatch started 0…60 ms late, varied
      // per item. Which of those commits first is left to timing, never to the call order.
      const later = <T>(ms: number, call: () => Promise<T>) =>
        new Promise<void>((done) => setTimeout(done, ms)).then(call);
      const calls = items.flatMap((item, i): Promise<unknown>[] => {
        const dispatch = () => h.dispatch(item.id, 'executor', e.generation);
        const stop = () => h.stop(item.id, 'suppress', 'operator');
        const requeue = () => h.requeue(item.id, 'operator');
        const lag = [0, 1, 3, 10, 30, 60][i % 6]!;
        if (i % 2 === 1) return [stop(), dispatch(), later(lag, requeue), later(lag, dispatch)];
        const first = dispatch();
        const settled = first.then(
          () => undefined,
          () => undefined,
        );
        return [
          first,
          settled.then(stop),
          settled.then(() => later(lag, requeue)),
          settled.then(() => later(lag, dispatch)),
        ];
      });
      const results = await Promise.allSettled(calls);
      const codes = new Map<string, number>();
      for (const r of results) {
        const code = r.status === 'fulfilled' ? 'ok' : isBatonError(r.reason) ? r.reason.code : 'untyped';
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
      kit.check(
        `${results.length} calls; every loser got a typed refusal (${[...codes].map(([c, n]) => `${c} ${n}`).join(', ')})`,
        results.length === 100 && results.every((r) => r.status === 'fulfilled' || isBatonError(r.reason)),
      );
      let versionsOk = true;
      let runAfterStop = 0;
      let dispatchWon = 0;
      let stopWon = 0;
      for (const item of items) {
        const final = await kit.item(item.id);
        const changes = (await h.events(`work:${item.id}`)).filter((x) => x.type === 'work_state_changed');
        const versions = changes.map((c) => (c.body as { version: number }).version);
        if (versions.join() !== Array.from({ length: final.version - 1 }, (_, i) => i + 2).join())
          versionsOk = false;
        const first = (changes[0]?.body as { to?: string } | undefined)?.to;
        if (first === 'running') dispatchWon++;
        if (first === 'suppressed') stopWon++;
        let stopped = false;
        for (const c of changes) {
          const to = (c.body as { to: string }).to;
          if (to === 'suppressed') stopped = true;
          if (to === 'queued') stopped = false;
          if (stopped && to === 'running') runAfterStop++;
        }
      }
      kit.check('one committed transition per version on every item (2…version)', versionsOk);
      kit.check(`never running after a committed stop (${runAfterStop} seen)`, runAfterStop === 0);
      // The race is real only if both sides won somewhere: a fixed order would make the property
      // trivially true (every dispatch meeting a suppressed item).
      kit.check(
        `contention: dispatch won first on ${dispatchWon} items, stop on ${stopWon}`,
        dispatchWon > 0 && stopWon > 0 && dispatchWon + stopWon === items.length,
      );

      // A7#20 "no entry after a committed revocation": enters race the revocation; each either
      // committed before it or is refused mission_not_active; once it committed every enter is
      // refused and nothing reaches the provider (HAR-24, AOC-REQ-008).
      // One lineage per occurrence (the domain holds two pending occurrences per lineage).
      const m2 = await kit.mission();
      const governed = [];
      for (let i = 0; i < 6; i++) {
        const { e: ex, item } = await kit.running(m2);
        governed.push({ e: ex, o: await kit.governed(ex, item, `race-${i}`) });
      }
      const raced = governed.slice(0, 5);
      const [revoked, ...entered] = await Promise.all([
        kit.operate(m2, 'revoke'),
        ...raced.map(({ e: ex, o }) => kit.refusal(kit.enter(ex, o.id))),
      ]);
      kit.check(
        `raced enters: accepted or mission_not_active (${entered.join()}), revoke ${revoked}`,
        revoked === 200 && entered.every((x) => x === 'accepted' || x === 'mission_not_active'),
      );
      const late = governed[5]!.o;
      await kit.refused(
        'an enter after the committed revocation',
        kit.enter(governed[5]!.e, late.id),
        'mission_not_active',
      );
      const after = await kit.view(late.id);
      kit.check(
        `nothing sent for it: not entered, effects 0 (${after.phase})`,
        (await kit.entries(late.id)) === 0 && kit.effects(after) === 0,
      );
    },
  },
  {
    id: 'HAR-CASE-023',
    title: 'A7#23 a matrix mapping revoked → pause or any non-active → continue is refused',
    requirements: ['HAR-25', 'A3.10'],
    inputs: { rows: ['revoked → pause', 'suspended → continue'] },
    async run(kit) {
      const bad = (row: string, behaviour: string) => {
        const rows = JSON.parse(JSON.stringify(DEFAULT_MATRIX.matrix.rows)) as Record<
          string,
          Record<string, string>
        >;
        for (const c of Object.keys(rows[row] ?? {})) rows[row]![c] = behaviour;
        return JSON.stringify({ ...DEFAULT_MATRIX.matrix, id: kit.name('bad'), rows });
      };
      for (const [row, b] of [
        ['revoked', 'pause'],
        ['suspended', 'continue'],
      ] as const) {
        // The same reader `baton serve --stop-matrix` and `baton stop-matrix check` use (A3.10).
        const got = await kit.refusal(Promise.resolve().then(() => parseMatrix(bad(row, b))));
        kit.check(`${row} → ${b}: stop_matrix_invalid (got ${got})`, got === 'stop_matrix_invalid');
      }
      // `baton serve --stop-matrix` with the first one, as a real process: exit 2, store untouched.
      const served = await serveWithMatrix(bad('revoked', 'pause'));
      kit.check(
        `baton serve --stop-matrix exits 2 stop_matrix_invalid before the store exists (exit ${served.code}, db ${served.dbCreated ? 'created' : 'absent'})`,
        served.code === 2 && /stop_matrix_invalid/.test(served.stderr) && !served.dbCreated,
      );
    },
  },
  {
    id: 'HAR-CASE-024',
    title:
      'A7#24 superseded ⇒ suppressed; requeue under the old Mission ⇒ successor_binding_required; rebind to an active successor ⇒ rebound',
    requirements: ['HAR-24', 'HAR-13', 'HAR-06'],
    inputs: { op: 'supersede', rebind: 'active successor' },
    async run(kit) {
      const m = await kit.mission();
      const e = await kit.executor(kit.name('lineage'));
      const item = await kit.enqueue(m, { lineage: e.lineage });
      await kit.operate(m, 'supersede');
      kit.check('superseded ⇒ suppressed', (await kit.item(item.id)).state === 'suppressed');
      const ev = (await kit.evidence(item.id)).at(-1);
      kit.check(
        `the suppression names the missing successor binding (${ev?.reason})`,
        ev?.reason === 'successor_binding_required' && ev.state === 'superseded',
      );
      await kit.refused(
        'requeue under the old Mission',
        kit.env.harness.requeue(item.id, 'operator'),
        'successor_binding_required',
      );
      const h = kit.env.harness;
      const revoked = await kit.mission();
      await kit.operate(revoked, 'revoke');
      await kit.refused(
        'rebind to a revoked Mission',
        h.rebind(item.id, { mission_binding: kit.binding(revoked) }, 'operator'),
        'mission_not_active',
      );
      const successor = await kit.mission();
      const rebound = await h.rebind(item.id, { mission_binding: kit.binding(successor) }, 'operator');
      kit.check(
        `rebind to the active successor ⇒ queued under it (${rebound.state})`,
        rebound.state === 'queued' && rebound.binding?.mission_id === successor,
      );
      const types = (await h.events(`work:${item.id}`)).map((x) => x.type);
      kit.check('the rebind is evidenced (rebound)', types.includes('rebound'));
      const d = await h.dispatch(item.id, 'executor', e.generation);
      kit.check('the rebound item dispatches after a check', d.item.state === 'running');
    },
  },
  {
    id: 'HAR-CASE-025',
    title:
      'A7#25 A4 anchors reproduce; unknown prefixes refused; the issuer lifecycle table; byte-identical 404s',
    requirements: ['MCO-03', 'MST-06', 'C-A23'],
    inputs: { intent: INTENT, authoritySet: AUTHORITY_SET, prefixes: ['sha-512:', 'SHA-256:'] },
    async run(kit) {
      const iss = 'https://as.example.com';
      kit.check('intent_hash vector', missionAnchor('intent', iss, INTENT) === INTENT_HASH);
      kit.check('authority_hash vector', missionAnchor('authority', iss, AUTHORITY_SET) === AUTHORITY_HASH);
      const m = await kit.mission();
      for (const prefix of ['sha-512:', 'SHA-256:']) {
        const hash = AUTHORITY_HASH.replace('sha-256:', prefix);
        const got = await kit.refusal(Promise.resolve().then(() => parseAnchor(hash)));
        kit.check(`the prefix ${prefix} is refused (${got})`, got !== 'accepted');
      }
      const codes = [
        await kit.operate(m, 'suspend'),
        await kit.operate(m, 'suspend'),
        await kit.operate(m, 'revoke'),
        await kit.operate(m, 'revoke'),
        await kit.operate(m, 'resume'),
      ];
      kit.check(
        `suspend 200, repeat 200, revoke 200, repeat 200, resume after revoke 409 (${codes.join(' ')})`,
        codes.join() === '200,200,200,200,409',
      );
      const hidden = await kit.mission({ clients: ['someone-else'] });
      const answers = await Promise.all(
        [hidden, 'msn_unknown000000000000000000000000'].map((x) => rawStatus(kit, x)),
      );
      kit.check(
        `unknown vs not visible to this client: byte-identical 404s (${answers.map((a) => a.status).join(', ')})`,
        answers[0]?.status === 404 && JSON.stringify(answers[0]) === JSON.stringify(answers[1]),
      );
    },
  },
];
