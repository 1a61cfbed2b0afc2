/**
 * The conformance report (AOC "Conformance"): implementation and profile versions, test-input
 * digest, per occurrence its id, executor generation, provider-binding digest, terminal or
 * unresolved state, entry and authority state, entry attempt count, evidence-source and
 * missing-knowledge flags; case results and requirement ids; unsupported cases, missing status
 * knowledge, bypass paths and untested provider semantics. Labelled as what it is.
 */
import { join } from 'node:path';
import { BatonError } from '../../core/errors.js';
import type { BypassPath, DomainLimits } from '../../occurrences/index.js';
import { runLabels, type RunLabels } from '../../observations/index.js';
import type { OccurrenceFacts } from './facts.js';
import type { Check } from './kit.js';
import { makeFolder, writeOutputFile } from '../output-files.js';

export const LABEL = 'same-team runner, synthetic provider';
/** The harness suite's label (issue 11 §6): the Mission issuer is the reference issuer. */
export const HARNESS_LABEL = 'same-team runner, SIMULATED issuer';

export type ConformanceSuite = 'aoc' | 'harness';

/**
 * The continuity observation profile's labels (OBS-06, B3.8): results against the synthetic
 * sandbox are SIMULATED, and so are the reference Mission issuer's answers; a local run never
 * counts as independent reproduction; the runner is same-team.
 */
export interface ReportLabels extends RunLabels {
  /** Only in the harness report: the Mission issuer it ran against. */
  readonly issuer?: 'SIMULATED';
}

export const LABELS: ReportLabels = runLabels({ syntheticProvider: true });
export const HARNESS_LABELS: ReportLabels = {
  ...runLabels({ syntheticProvider: true }),
  issuer: 'SIMULATED',
};
export const ALL_REQUIREMENTS = Array.from(
  { length: 13 },
  (_, i) => `AOC-REQ-${String(i + 1).padStart(3, '0')}`,
);

/** `not_run`: part of the case could not be exercised here (its reasons say which); never a pass. */
export type CaseResult = 'pass' | 'fail' | 'unsupported' | 'not_run';

export interface CaseReport {
  readonly id: string;
  readonly title: string;
  readonly result: CaseResult;
  readonly requirements: readonly string[];
  readonly inputDigest: string;
  readonly checks: readonly Check[];
  readonly occurrences: readonly OccurrenceFacts[];
  readonly error?: string;
  /** Why (part of) the case was not run; present only when the result is `not_run`. */
  readonly notRun?: readonly string[];
}

export interface ProfileEntry {
  readonly id: string;
  readonly version: string;
  readonly digest: string;
  readonly template: { readonly file: string; readonly version: string; readonly digest: string };
  readonly pinKinds: readonly string[];
}

export interface ConformanceReport {
  readonly format: 'baton.aoc-conformance-report/1' | 'baton.harness-conformance-report/1';
  readonly suite: ConformanceSuite;
  readonly label: typeof LABEL | typeof HARNESS_LABEL;
  readonly labels: ReportLabels;
  readonly generatedAt: string;
  readonly implementation: { readonly name: string; readonly version: string; readonly node: string };
  readonly engine: string;
  readonly profiles: readonly ProfileEntry[];
  readonly testInputDigest: string;
  readonly domain: { readonly id: string; readonly limits: DomainLimits };
  readonly summary: {
    readonly total: number;
    readonly pass: number;
    readonly fail: number;
    readonly unsupported: number;
    readonly notRun: number;
  };
  readonly cases: readonly CaseReport[];
  readonly requirementsEvaluated: readonly string[];
  readonly requirementsWithoutCase: readonly { readonly id: string; readonly note: string }[];
  readonly unsupportedCases: readonly string[];
  readonly missingStatusKnowledge: readonly {
    readonly case: string;
    readonly role: string;
    readonly occurrenceId: string;
    readonly state: string;
    readonly reasons: readonly string[];
  }[];
  readonly bypassPaths: readonly BypassPath[];
  readonly untestedProviderSemantics: readonly string[];
  readonly limitations: readonly string[];
}

export const UNTESTED_PROVIDER_SEMANTICS: readonly string[] = [
  'any live provider API: the sandbox is synthetic and written by the same team',
  'JWKS-pinned and TLS-certificate-pinned status sources (the sandbox signs with HMAC and Ed25519 only)',
  'provider-side idempotency-key expiry other than the sandbox’s retention pruning',
  'webhook retries, reordering and duplicate delivery (the sandbox delivers once, without retries)',
  'listing consistency when payments are created or pruned between pages',
  'native refunds and reversals (the sandbox has none: compensation is modelled as a new payment)',
  'hashed (sha256-jcs) native key rules: the profiles use the template rule',
];

export type ConformanceEngine = 'sqlite' | 'postgres';

const ENGINE_NAMES: Readonly<Record<ConformanceEngine, string>> = {
  sqlite: 'SQLite',
  postgres: 'PostgreSQL',
};

/** What a passing report does not establish; the first line heads the Markdown report. */
export function limitations(engine: ConformanceEngine, suite: ConformanceSuite = 'aoc'): readonly string[] {
  const other: ConformanceEngine = engine === 'sqlite' ? 'postgres' : 'sqlite';
  const head =
    suite === 'harness'
      ? [
          "Passing these local cases establishes consistency with the Mission-aware harness build spec (A7) against Baton's own reference issuer, not interoperability with any other Mission issuer, deployment or adoption (HAR-27).",
          'The runner, the service, the reference Mission issuer and the sandbox are maintained by the same team; the issuer and the provider are SIMULATED.',
          'The claim covers the governed queue and provider entry; executor code between dispatch and entry, AOC bypass paths and reconciliation reads stay outside it (docs/harness.md).',
        ]
      : [
          'Passing these local cases establishes consistency with the profile, not independent interoperability, live-provider correctness, deployment or adoption (AOC "Conformance").',
          'The runner, the service and the sandbox are maintained by the same team.',
        ];
  return [
    ...head,
    `Only the ${ENGINE_NAMES[engine]} engine was exercised in this run; ${ENGINE_NAMES[other]} is not covered by this report.`,
    suite === 'harness'
      ? 'Mission gating inside the coordination domain does not stop the disclosed bypass paths.'
      : 'Fencing inside the coordination domain does not stop the disclosed bypass paths; AOC-CASE-005 demonstrates the direct path.',
  ];
}

function mark(ok: boolean): string {
  return ok ? 'ok' : 'FAILED';
}

function occurrenceRow(c: CaseReport, f: OccurrenceFacts): string {
  const s = f.state;
  const state = s.terminal ?? (s.unresolved ? 'unresolved' : s.phase);
  const gen = `${f.executorGeneration.captured}/${f.executorGeneration.entered ?? '–'}`;
  const a = f.authority;
  const mk = f.evidence.missingKnowledge.join(', ') || '–';
  return `| ${c.id} | ${f.role} | \`${f.occurrenceId}\` | ${gen} | ${state} (${s.outcome}, effect ${s.effect}${s.conflict ? ', conflict' : ''}) | ${f.entry.attempts} | ${a.id}: reserved ${a.reserved}, consumed ${a.consumed}/${a.total} | ${f.providerEffects} | ${f.evidence.sources.join(', ') || '–'} | ${mk} | \`${f.providerBindingDigest}\` |`;
}

function labelsLine(l: ReportLabels): string {
  const issuer = l.issuer === undefined ? '' : `; Mission issuer **${l.issuer}** (reference issuer)`;
  return `- labels (OBS-06): provider results **${l.provider}** (synthetic sandbox)${issuer}; independent reproduction **${l.independent_reproduction}**; runner **${l.runner}**`;
}

/** How many cases ended in each result: the summary both suites' reports carry. */
export function summarize(cases: readonly CaseReport[]): ConformanceReport['summary'] {
  const count = (x: CaseResult) => cases.filter((c) => c.result === x).length;
  return {
    total: cases.length,
    pass: count('pass'),
    fail: count('fail'),
    unsupported: count('unsupported'),
    notRun: count('not_run'),
  };
}

/** The requirements the cases evaluated, once each, sorted. */
export function evaluatedRequirements(cases: readonly CaseReport[]): string[] {
  return [...new Set(cases.flatMap((c) => c.requirements))].sort();
}

export function renderMarkdown(r: ConformanceReport): string {
  const title =
    r.suite === 'harness' ? 'Harness (Mission-aware) conformance report' : 'AOC conformance report';
  const lines = [
    `# ${title} — ${r.label}`,
    '',
    `**${r.label.toUpperCase()}.** ${r.limitations[0] ?? ''}`,
    '',
    labelsLine(r.labels),
    `- implementation: ${r.implementation.name} ${r.implementation.version} (Node ${r.implementation.node}), engine ${r.engine}`,
    `- generated: ${r.generatedAt}`,
    `- test-input digest: \`${r.testInputDigest}\``,
    `- summary: ${r.summary.pass} pass, ${r.summary.fail} fail, ${r.summary.unsupported} unsupported, ${r.summary.notRun} NOT_RUN of ${r.summary.total}`,
    `- requirements evaluated: ${r.requirementsEvaluated.join(', ')}`,
    ...r.requirementsWithoutCase.map((x) => `- not evaluated by a case: ${x.id} — ${x.note}`),
    `- unsupported cases: ${r.unsupportedCases.length === 0 ? 'none' : r.unsupportedCases.join(', ')}`,
    '',
    '## Provider profiles',
    '',
    '| id | version | digest | from | pins |',
    '|---|---|---|---|---|',
    ...r.profiles.map(
      (p) =>
        `| ${p.id} | ${p.version} | \`${p.digest}\` | ${p.template.file} (${p.template.version}) | ${p.pinKinds.join(', ')} |`,
    ),
    '',
    '## Cases',
    '',
    '| case | result | title | requirements | checks |',
    '|---|---|---|---|---|',
    ...r.cases.map(
      (c) =>
        `| ${c.id} | **${c.result === 'not_run' ? 'NOT_RUN' : c.result}** | ${c.title} | ${c.requirements.join(' ')} | ${c.checks.filter((x) => x.ok).length}/${c.checks.length} |`,
    ),
    '',
    '## Occurrences',
    '',
    'Generation is captured/entered. Effects are the sandbox’s applied-effect count for the native key.',
    '',
    '| case | role | occurrence | generation | state | entries | authority | effects | evidence sources | missing knowledge | provider-binding digest |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.cases.flatMap((c) => c.occurrences.map((f) => occurrenceRow(c, f))),
    '',
    '## Checks',
    '',
    ...r.cases.flatMap((c) => [
      `### ${c.id} ${c.title}: ${c.result}`,
      '',
      `input digest \`${c.inputDigest}\`${c.error === undefined ? '' : ` — error: ${c.error}`}`,
      '',
      ...c.checks.map((x) => `- ${mark(x.ok)}: ${x.name}`),
      ...(c.notRun ?? []).map((x) => `- NOT_RUN: ${x}`),
      '',
    ]),
    '## Missing status knowledge',
    '',
    ...(r.missingStatusKnowledge.length === 0
      ? ['none']
      : r.missingStatusKnowledge.map(
          (m) =>
            `- ${m.case} ${m.role} \`${m.occurrenceId}\` (${m.state}): ${m.reasons.join(', ') || 'no status answer recorded'}`,
        )),
    '',
    '## Bypass paths (disclosed, not fenced by the domain)',
    '',
    ...r.bypassPaths.map((p) => `- ${p.kind}: **${p.status}** — ${p.description}`),
    '',
    '## Untested provider semantics',
    '',
    ...r.untestedProviderSemantics.map((s) => `- ${s}`),
    '',
    '## Limitations',
    '',
    ...r.limitations.map((s) => `- ${s}`),
    '',
  ];
  return lines.join('\n');
}

/** The report must never carry a credential, a key, a token or a raw request body. */
export function findLeak(texts: readonly string[], secrets: ReadonlySet<string>): boolean {
  return [...secrets].some((s) => s.length >= 8 && texts.some((t) => t.includes(s)));
}

/**
 * Write report.json and report.md into `out` (created if missing; `baton conformance` checked it
 * before the run). The leak audit runs BEFORE anything is written: a leak is a failure of the
 * run, not a file to clean up.
 */
export function writeReport(
  report: ConformanceReport,
  out: string,
  secrets: ReadonlySet<string>,
): { readonly json: string; readonly markdown: string } {
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const markdown = renderMarkdown(report);
  if (findLeak([json, markdown], secrets)) {
    throw new BatonError('internal', 'the conformance report would contain a secret; nothing was written');
  }
  makeFolder(out);
  const files = { json: join(out, 'report.json'), markdown: join(out, 'report.md') };
  // Each through FILE.partial: a failure is `usage: cannot write FILE: …`, never a stack.
  writeOutputFile(files.json, json);
  writeOutputFile(files.markdown, markdown);
  return files;
}

/** The occurrences a run left unresolved, with the missing-knowledge reasons (AOC-REQ-009). */
export function missingStatusKnowledge(
  cases: readonly CaseReport[],
): ConformanceReport['missingStatusKnowledge'] {
  return cases.flatMap((c) =>
    c.occurrences
      .filter((f) => f.state.unresolved)
      .map((f) => ({
        case: c.id,
        role: f.role,
        occurrenceId: f.occurrenceId,
        state: `${f.state.phase}/${f.state.outcome}/${f.state.effect}`,
        reasons: f.evidence.missingKnowledge,
      })),
  );
}
