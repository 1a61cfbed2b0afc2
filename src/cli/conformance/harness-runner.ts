/**
 * `baton conformance --suite harness`: the 25 acceptance tests of the Mission build spec (A7) as
 * cases HAR-CASE-001 … 025, against the reference Mission issuer on loopback and Baton's harness
 * and provider entry (SQLite in a temp dir, or a scratch PostgreSQL database), written in the AOC
 * suite's report format (report.ts) labelled "same-team runner, SIMULATED issuer". A case passes
 * only when every check holds and every part of its A7 test ran; a part that cannot run here makes
 * it NOT_RUN with the reason, never a pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestJcs } from '../../core/digest.js';
import { formatRfc3339 } from '../../core/time.js';
import { DEFAULT_MATRIX } from '../../missions/index.js';
import type { CaseDefinition } from './case.js';
import { CONFORMANCE_DOMAIN } from './domain.js';
import { conformanceStore } from './env.js';
import { CACHE_CASES } from './harness-cases-cache.js';
import { QUEUE_CASES } from './harness-cases-queue.js';
import { SIGNAL_CASES } from './harness-cases-signals.js';
import { STATUS_CASES } from './harness-cases-status.js';
import { WORK_CASES } from './harness-cases-work.js';
import { openHarnessEnv, type HarnessEnv } from './harness-env.js';
import { HarnessKit } from './harness-kit.js';
import * as r from './report.js';
import {
  errorText,
  implementationVersion,
  profileEntry,
  type ConformanceOptions,
  type ConformanceRun,
} from './runner.js';

const byId = (a: CaseDefinition<HarnessKit>, b: CaseDefinition<HarnessKit>) => a.id.localeCompare(b.id);

export const HARNESS_CASES: readonly CaseDefinition<HarnessKit>[] = [
  ...QUEUE_CASES,
  ...STATUS_CASES,
  ...SIGNAL_CASES,
  ...WORK_CASES,
  ...CACHE_CASES,
].sort(byId);

/** The requirement ids the harness cases can evaluate (HAR-01 … HAR-29). */
const HAR_REQUIREMENTS = Array.from({ length: 29 }, (_, i) => `HAR-${String(i + 1).padStart(2, '0')}`);

export const HARNESS_UNTESTED: readonly string[] = [
  "any Mission issuer other than Baton's reference issuer (same team, SIMULATED)",
  'mTLS and DPoP client authentication at the Status endpoint (private_key_jwt only, C-A13)',
  'RFC 8936 poll delivery and SSF stream verification SETs (push only in this suite)',
  'the Fastify shell of POST /v1/missions/signals/{issuer} (header reading, body scope): the suite calls its handler code, MissionConsumer.receivePush, from its own loopback listener',
  'executor code between dispatch and entry (the SDK ConnectionCache runs in the runner’s process, A7#19)',
  'cache_disabled evidence over HTTP: no route of `baton serve` records it; A7#19’s comes from the runner wiring ConnectionCache.onDisabled to MissionsService.recordCacheDisabled in process',
];

/**
 * One case, then its faults cleared. `faultsCleared` false: the issuer may still have faults armed,
 * so the case fails with that error and the run starts no further case.
 */
export async function runHarnessCase(
  env: HarnessEnv,
  c: CaseDefinition<HarnessKit>,
): Promise<{ report: r.CaseReport; faultsCleared: boolean }> {
  const kit = new HarnessKit(env, c.id);
  let error: string | undefined;
  const background = env.backgroundErrors.length;
  try {
    await c.run(kit);
  } catch (e) {
    error = errorText(e);
  }
  // The push route's background work (a version gap's Status check) failing is never ignored.
  const failedBehind = env.backgroundErrors.slice(background);
  if (failedBehind.length > 0) {
    const behind = `push route background work failed: ${failedBehind.join('; ')}`;
    error = error === undefined ? behind : `${error}; ${behind}`;
  }
  // Faults left armed would leak into later cases: a clear that fails fails this case (with
  // both errors) and then the run, never swallowed.
  let faultsCleared = true;
  try {
    await kit.clearFaults();
  } catch (e) {
    faultsCleared = false;
    const cleared = `clearing the issuer's faults failed: ${errorText(e)}`;
    error = error === undefined ? cleared : `${error}; ${cleared}`;
  }
  const checksOk = kit.checks.every((x) => x.ok);
  const result: r.CaseResult =
    error !== undefined || !checksOk
      ? 'fail'
      : kit.notRun.length > 0
        ? 'not_run'
        : kit.checks.length > 0
          ? 'pass'
          : 'fail';
  const report: r.CaseReport = {
    id: c.id,
    title: c.title,
    result,
    requirements: c.requirements,
    inputDigest: digestJcs({ id: c.id, inputs: c.inputs }),
    checks: kit.checks,
    occurrences: await kit.facts(),
    ...(error !== undefined && { error }),
    ...(result === 'not_run' && { notRun: kit.notRun }),
  };
  return { report, faultsCleared };
}

function buildReport(
  env: HarnessEnv,
  cases: r.CaseReport[],
  engine: r.ConformanceEngine,
  bypass: r.ConformanceReport['bypassPaths'],
): r.ConformanceReport {
  const evaluated = r.evaluatedRequirements(cases);
  return {
    format: 'baton.harness-conformance-report/1',
    suite: 'harness',
    label: r.HARNESS_LABEL,
    labels: r.HARNESS_LABELS,
    generatedAt: formatRfc3339(Date.now()),
    implementation: { ...implementationVersion(), node: process.version },
    engine,
    profiles: [profileEntry(env.profile, 'sandbox-payments')],
    testInputDigest: digestJcs({
      cases: HARNESS_CASES.map((c) => ({ id: c.id, inputs: c.inputs })),
      domain: CONFORMANCE_DOMAIN,
      matrix: DEFAULT_MATRIX.digest,
    }),
    domain: { id: CONFORMANCE_DOMAIN.id, limits: CONFORMANCE_DOMAIN.limits },
    summary: r.summarize(cases),
    cases,
    requirementsEvaluated: evaluated,
    requirementsWithoutCase: HAR_REQUIREMENTS.filter((id) => !evaluated.includes(id)).map((id) => ({
      id,
      note: 'no harness case evaluates it in this run',
    })),
    unsupportedCases: cases
      .filter((c) => c.result === 'unsupported' || c.result === 'not_run')
      .map((c) => c.id),
    missingStatusKnowledge: r.missingStatusKnowledge(cases),
    bypassPaths: bypass,
    untestedProviderSemantics: [...r.UNTESTED_PROVIDER_SEMANTICS, ...HARNESS_UNTESTED],
    limitations: r.limitations(engine, 'harness'),
  };
}

export async function runHarnessConformance(options: ConformanceOptions): Promise<ConformanceRun> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-harness-conformance-'));
  const cases: r.CaseReport[] = [];
  let env: HarnessEnv | undefined;
  try {
    env = await openHarnessEnv(dir, conformanceStore(options, 'harness_conformance'));
    await env.svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 10_000_000 });
    for (const c of HARNESS_CASES.filter((x) => options.only === undefined || options.only.includes(x.id))) {
      options.stop?.throwIfAborted(); // a SIGINT/SIGTERM: no further case; `finally` cleans up
      const { report, faultsCleared } = await runHarnessCase(env, c);
      cases.push(report);
      const passed = report.checks.filter((x) => x.ok).length;
      const shown = report.result === 'not_run' ? 'NOT_RUN' : report.result;
      options.onProgress?.(
        `${c.id} ${shown.padEnd(4)} ${c.title} (${passed}/${report.checks.length} checks)${report.error ? ` — ${report.error}` : ''}`,
      );
      // Faults possibly still armed: a later case's verdict would not be its own. The run stops
      // here and fails (this case failed); the report names the cases that ran.
      if (!faultsCleared) break;
    }
    const report = buildReport(
      env,
      cases,
      options.engine ?? 'sqlite',
      (await env.svc.getDomain()).bypassPaths,
    );
    options.stop?.throwIfAborted();
    const files = r.writeReport(report, options.out, env.secrets);
    // NOT_RUN cases are not failures of the run, and never passes: `passed` means no case failed.
    const passed = report.summary.fail === 0 && report.summary.total > 0;
    return { report, passed, files, secrets: [...env.secrets] };
  } finally {
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
