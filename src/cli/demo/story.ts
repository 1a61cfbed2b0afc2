/**
 * `baton demo`: a worker process pays three invoices through the sandbox and is SIGKILLed right
 * after it sent the second — AFTER the provider applied the payment and BEFORE the worker could
 * record the answer. A successor takes over, sees the unresolved occurrence, reconciles it from the
 * signed status source and does not pay twice, then pays the third. Then the same with the
 * provider answering unsigned: the occurrence stays unresolved, with the reason shown.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createSandboxProvider,
  deployProfile,
  loadProfile,
  sandboxDeployment,
  type SandboxProvider,
} from '../../providers/index.js';
import { ContinuityStore, openOccurrencesOnSqlite, type OccurrencesOnSqlite } from '../../store/index.js';
import { DEMO_DOMAIN } from './domain.js';
import { runWorker } from './processes.js';
import { AUTHORITY, ENV, lastReason, LINEAGE } from './shared.js';
import { effectsByInvoice, printSummary } from './summary.js';

export interface DemoOptions {
  /** Keep the database here instead of a temp file. */
  readonly db?: string;
  readonly print: (line: string) => void;
  /**
   * Aborted by a first SIGINT/SIGTERM: a running worker is killed, no further step starts, and the
   * temporary folder (database, WAL, domain key) is removed before the abort's reason is thrown.
   */
  readonly stop?: AbortSignal;
}

interface World {
  readonly opened: OccurrencesOnSqlite;
  readonly sandbox: SandboxProvider;
  readonly hmacSecret: Buffer;
  readonly profile: string;
  readonly db: string;
  /** False for the temporary database, deleted when the demo ends. */
  readonly kept: boolean;
  readonly stop: AbortSignal | undefined;
}

/**
 * The store first (a database that cannot be opened leaves nothing listening), then the sandbox;
 * whatever was opened is closed again when a later step fails.
 */
async function setUp(db: string, kept: boolean, stop: AbortSignal | undefined): Promise<World> {
  const hmacSecret = randomBytes(32);
  const opened = await openOccurrencesOnSqlite(db);
  const sandbox = createSandboxProvider({ hmacSecret });
  try {
    await sandbox.listen(0, '127.0.0.1');
    const svc = opened.service;
    await svc.configureDomain(DEMO_DOMAIN);
    const p = await svc.registerProfile(
      deployProfile(loadProfile('sandbox-payments'), sandboxDeployment(sandbox)),
    );
    await svc.createAuthority({ id: AUTHORITY, unit: 'EUR-cents', total: 1_000_000 });
    return { opened, sandbox, hmacSecret, profile: `${p.id}@${p.version}`, db, kept, stop };
  } catch (error) {
    await sandbox.close().catch(() => undefined);
    await opened.close().catch(() => undefined);
    throw error;
  }
}

async function generation(
  w: World,
  print: (l: string) => void,
): Promise<{ credential: string; generation: number }> {
  w.stop?.throwIfAborted();
  const t = await w.opened.service.takeover({ lineage: LINEAGE });
  const retired =
    t.retiredGeneration === null
      ? ''
      : `, generation ${t.retiredGeneration} retired (its credential is now refused)`;
  const handed = t.unresolved.map((o) => o.id).join(', ') || 'none';
  print(`takeover: generation ${t.generation} of ${LINEAGE}${retired}; unresolved handed over: ${handed}`);
  return { credential: t.credential, generation: t.generation };
}

async function worker(
  w: World,
  g: { credential: string; generation: number },
  invoices: string[],
  dieAfter: string,
  print: (l: string) => void,
) {
  print(
    `start worker process (generation ${g.generation}) for ${invoices.join(', ')}${dieAfter ? `; it will be killed right after sending ${dieAfter}` : ''}`,
  );
  w.stop?.throwIfAborted();
  const run = await runWorker(
    {
      [ENV.db]: w.db,
      [ENV.sandbox]: w.sandbox.url,
      [ENV.profile]: w.profile,
      [ENV.invoices]: invoices.join(','),
      [ENV.dieAfter]: dieAfter,
      [ENV.credential]: g.credential,
      [ENV.hmacSecret]: w.hmacSecret.toString('base64url'),
      [ENV.generation]: String(g.generation),
    },
    (line) => print(`  worker g${g.generation} │ ${line}`),
    w.stop,
  );
  w.stop?.throwIfAborted(); // the worker was killed by the stop: the story ends here
  return run;
}

async function act(
  w: World,
  invoices: string[],
  doomed: string,
  beforeSuccessor: () => Promise<void>,
  print: (l: string) => void,
): Promise<boolean> {
  const g1 = await generation(w, print);
  const first = await worker(w, g1, invoices, doomed, print);
  print(
    `the kill landed AFTER the provider applied ${doomed} (it had answered) and BEFORE the worker recorded the answer`,
  );
  await beforeSuccessor();
  const g2 = await generation(w, print);
  const second = await worker(w, g2, invoices, '', print);
  return first.killedAtMarker && second.code === 0;
}

/** Act 2: from now on the sandbox answers everything about the doomed payment unsigned. */
async function unsign(w: World, print: (l: string) => void): Promise<void> {
  for (const o of await w.opened.service.listUnresolved(LINEAGE)) {
    w.sandbox.addFault({ key: o.provider.nativeKey ?? '' }, 'unsigned', 1000);
    print(`sandbox fault injected: answers about ${o.id}'s native key are now UNSIGNED`);
  }
}

/**
 * Continuity records (docs/observations.md): one signed handoff record per takeover, projected
 * from the evidence log. Four takeovers ⇒ four records, none in conflict with its facts.
 */
async function recordHandoffs(w: World, print: (l: string) => void): Promise<boolean> {
  const continuity = new ContinuityStore({
    engine: w.opened.engine,
    signingKey: w.opened.domainKey.privateKey,
  });
  const p = await continuity.project('system:demo');
  // The temporary database is deleted when the demo ends: name only one that is kept.
  const follow = w.kept
    ? `\`baton report --db ${w.db}\` counts them, \`baton observe export --db ${w.db}\` prints them for \`baton observe verify --producer urn:baton:${DEMO_DOMAIN.id}\``
    : 'the database is deleted when the demo ends: run `baton demo --db FILE` to keep it for `baton report` and `baton observe export`';
  print(`continuity: ${p.created} signed handoff record(s), one per takeover (memory UNKNOWN); ${follow}`);
  return p.created === 4 && p.conflicts.length === 0;
}

export async function runDemo(options: DemoOptions): Promise<boolean> {
  const print = options.print;
  const dir = options.db === undefined ? mkdtempSync(join(tmpdir(), 'baton-demo-')) : undefined;
  let w: World;
  try {
    w = await setUp(options.db ?? join(dir ?? '', 'demo.db'), options.db !== undefined, options.stop);
  } catch (error) {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  try {
    print(`sandbox payments provider (synthetic) on ${w.sandbox.url}; database ${w.db}`);
    print('— act 1: the provider answers signed —');
    const ok1 = await act(
      w,
      ['invoice-1', 'invoice-2', 'invoice-3'],
      'invoice-2',
      () => Promise.resolve(),
      print,
    );
    print('— act 2: the same, but the provider answers unsigned (sandbox fault) —');
    const ok2 = await act(
      w,
      ['invoice-4', 'invoice-5', 'invoice-6'],
      'invoice-5',
      () => unsign(w, print),
      print,
    );
    w.stop?.throwIfAborted();
    const counts = await effectsByInvoice(w.opened, w.sandbox);
    const stuck = counts.find((c) => c.invoice === 'invoice-5');
    const reason = stuck ? await lastReason(w.opened.service, stuck.occurrenceId) : null;
    const facts =
      ok1 &&
      ok2 &&
      counts.length === 6 &&
      counts.every((c) => c.effects === 1) &&
      stuck?.unresolved === true &&
      reason === 'unauthenticated';
    const handoffs = await recordHandoffs(w, print);
    printSummary(counts, reason, facts && handoffs, print);
    return facts && handoffs;
  } finally {
    await w.sandbox.close();
    await w.opened.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}
