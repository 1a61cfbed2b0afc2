/**
 * `baton conformance`: run AOC-CASE-001 … 012 against the real occurrences service (SQLite in a
 * temp dir) and the sandbox provider over HTTP, then write report.json and report.md. A case passes
 * only when every check computed from observed facts holds; a throw fails it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestJcs } from '../../core/digest.js';
import { isBatonError } from '../../core/errors.js';
import { formatRfc3339 } from '../../core/time.js';
import type { RegisteredProfile } from '../../occurrences/index.js';
import { profileDigest } from '../../occurrences/index.js';
import { loadProfile, type SandboxProfileName } from '../../providers/index.js';
import { batonPackage } from '../version.js';
import type { CaseDefinition } from './case.js';
import { BINDING_CASES } from './cases-binding.js';
import { EVIDENCE_CASES } from './cases-evidence.js';
import { FENCING_CASES } from './cases-fencing.js';
import { REMEDY_CASES } from './cases-remedy.js';
import { ENTRY_CASES } from './cases-entry.js';
import { CONFORMANCE_DOMAIN } from './domain.js';
import { conformanceStore, openEnv, type Env } from './env.js';
import { Kit } from './kit.js';
import * as r from './report.js';

export const CASES: readonly CaseDefinition[] = [
  ...ENTRY_CASES,
  ...FENCING_CASES,
  ...BINDING_CASES,
  ...EVIDENCE_CASES,
  ...REMEDY_CASES,
];

export interface ConformanceOptions {
  readonly out: string;
  /** Default SQLite in the temp dir; PostgreSQL needs `postgresUrl` (a server allowing CREATEDB). */
  readonly engine?: r.ConformanceEngine;
  readonly postgresUrl?: string;
  /** Only these case ids (default: all twelve). */
  readonly only?: readonly string[];
  readonly onProgress?: (line: string) => void;
  /** With --engine postgres: told the scratch database's name once it exists. */
  readonly onScratch?: (name: string) => void;
  /**
   * Aborted by a first SIGINT/SIGTERM: the run starts no further case, drops its scratch database,
   * removes its temp folder and throws the abort's reason (runStoppable, src/cli/command.ts).
   */
  readonly stop?: AbortSignal;
}

export interface ConformanceRun {
  readonly report: r.ConformanceReport;
  readonly passed: boolean;
  readonly files: { readonly json: string; readonly markdown: string };
  /** Every secret the run handled (for leak audits in tests); never written anywhere. */
  readonly secrets: readonly string[];
}

/** The implementation under test: the package's npm name and the version `baton --version` prints. */
export function implementationVersion(): { name: string; version: string } {
  const { name, version } = batonPackage();
  return { name, version };
}

export function errorText(error: unknown): string {
  if (isBatonError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : 'unknown failure';
}

async function runCase(env: Env, c: CaseDefinition): Promise<r.CaseReport> {
  const kit = new Kit(env);
  let error: string | undefined;
  try {
    await c.run(kit);
  } catch (e) {
    error = errorText(e);
  }
  const ok = error === undefined && kit.checks.length > 0 && kit.checks.every((x) => x.ok);
  return {
    id: c.id,
    title: c.title,
    result: ok ? 'pass' : 'fail',
    requirements: c.requirements,
    inputDigest: digestJcs({ id: c.id, inputs: c.inputs }),
    checks: kit.checks,
    occurrences: await kit.facts(),
    ...(error !== undefined && { error }),
  };
}

export function profileEntry(p: RegisteredProfile, file: SandboxProfileName): r.ProfileEntry {
  const template = loadProfile(file);
  const kinds = [
    p.document.acknowledgement.authentication,
    ...p.document.statusSources.map((s) => s.authentication),
  ];
  return {
    id: p.id,
    version: p.version,
    digest: p.digest,
    template: { file: `profiles/${file}.json`, version: template.version, digest: profileDigest(template) },
    pinKinds: [...new Set(kinds.map((k) => k.kind))],
  };
}

function buildReport(
  env: Env,
  cases: r.CaseReport[],
  engine: r.ConformanceEngine,
  bypass: r.ConformanceReport['bypassPaths'],
): r.ConformanceReport {
  const evaluated = r.evaluatedRequirements(cases);
  const templates = (['sandbox-payments', 'sandbox-payments-ed25519'] as const).map((f) => loadProfile(f));
  return {
    format: 'baton.aoc-conformance-report/1',
    suite: 'aoc',
    label: r.LABEL,
    labels: r.LABELS,
    generatedAt: formatRfc3339(Date.now()),
    implementation: { ...implementationVersion(), node: process.version },
    engine,
    profiles: [
      profileEntry(env.profile, 'sandbox-payments'),
      profileEntry(env.ed25519Profile, 'sandbox-payments-ed25519'),
    ],
    testInputDigest: digestJcs({
      cases: CASES.map((c) => ({ id: c.id, inputs: c.inputs })),
      domain: CONFORMANCE_DOMAIN,
      templates,
    }),
    domain: { id: CONFORMANCE_DOMAIN.id, limits: CONFORMANCE_DOMAIN.limits },
    summary: r.summarize(cases),
    cases,
    requirementsEvaluated: evaluated,
    requirementsWithoutCase: r.ALL_REQUIREMENTS.filter((id) => !evaluated.includes(id)).map((id) => ({
      id,
      note:
        id === 'AOC-REQ-013'
          ? 'a non-claim: this report claims no ledger migration or format equivalence'
          : 'no case evaluates it in this run',
    })),
    unsupportedCases: cases.filter((c) => c.result === 'unsupported').map((c) => c.id),
    missingStatusKnowledge: r.missingStatusKnowledge(cases),
    bypassPaths: bypass,
    untestedProviderSemantics: r.UNTESTED_PROVIDER_SEMANTICS,
    limitations: r.limitations(engine, 'aoc'),
  };
}

export async function runConformance(options: ConformanceOptions): Promise<ConformanceRun> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-conformance-'));
  const cases: r.CaseReport[] = [];
  let env: Env | undefined;
  try {
    env = await openEnv(dir, conformanceStore(options));
    for (const c of CASES.filter((x) => options.only === undefined || options.only.includes(x.id))) {
      options.stop?.throwIfAborted(); // a SIGINT/SIGTERM: no further case; `finally` cleans up
      const report = await runCase(env, c);
      cases.push(report);
      const passed = report.checks.filter((x) => x.ok).length;
      options.onProgress?.(
        `${c.id} ${report.result.padEnd(4)} ${c.title} (${passed}/${report.checks.length} checks)${report.error ? ` — ${report.error}` : ''}`,
      );
    }
    const report = buildReport(
      env,
      cases,
      options.engine ?? 'sqlite',
      (await env.svc.getDomain()).bypassPaths,
    );
    options.stop?.throwIfAborted();
    const files = r.writeReport(report, options.out, env.secrets);
    // Distinct ids: a repeated `--case` runs its case once and is expected once.
    const expected = options.only === undefined ? CASES.length : new Set(options.only).size;
    const passed = report.summary.pass === report.summary.total && report.summary.total === expected;
    return { report, passed, files, secrets: [...env.secrets] };
  } finally {
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
