/**
 * `baton conformance`: run AOC-CASE-001 … 012 (default `--suite aoc`) against the real service
 * (SQLite in a temp dir) and the sandbox provider over HTTP, or with `--suite harness` the Mission
 * build spec's 25 acceptance tests (HAR-CASE-001 … 025) against the reference Mission issuer; print
 * one line per case and write report.json and report.md (docs/conformance.md).
 */
import { BatonError } from '../../core/errors.js';
import { parseOptions, printJson, reportError, runStoppable, wantsHelp, type Command } from '../command.js';
import { HARNESS_CASES, runHarnessConformance } from '../conformance/harness-runner.js';
import type { ConformanceEngine, ConformanceSuite } from '../conformance/report.js';
import { CASES, runConformance } from '../conformance/runner.js';
import { redactUrl } from '../../server/open.js';
import { EXIT, type CliIo } from '../io.js';
import { checkOutputFolder } from '../output-files.js';

const USAGE = `usage: baton conformance [--suite aoc|harness] [--engine sqlite | --engine postgres --postgres URL]
                         [--out DIR] [--case AOC-CASE-0NN | --case HAR-CASE-0NN]... [--json]

Run the AOC conformance cases (AOC-CASE-001 … 012) against the real occurrences service and the
sandbox payments provider over HTTP on 127.0.0.1. The service keeps its state on a temporary SQLite
file (default), or with --engine postgres on a scratch database the run creates on the server at
URL and drops at the end (the user needs CREATEDB; the password can stay in PGPASSWORD; its name
is printed). Writes DIR/report.json and DIR/report.md (default DIR: ./conformance-report, created
before any case runs; a DIR that is a file or cannot be made or written into is refused then,
exit 2; each written whole, then renamed over an earlier run's), labelled
"same-team runner, synthetic provider", naming the engine. Exit 0 when every case passes, 1
otherwise, 2 on bad arguments. A first SIGINT or SIGTERM stops the run after the current case,
drops the scratch database, removes the temporary files and exits 130 or 143 (no report written);
a second one ends it at once, which may leave them behind. --json prints one JSON document instead of the progress lines
(they go to stderr): {"report": the report.json document, "files": {"json","markdown"}}.

--suite harness runs the Mission-aware harness acceptance tests (HAR-CASE-001 … 025, build spec
A7) against Baton's reference Mission issuer on 127.0.0.1 (SETs pushed to a receiver of the
runner, Status fetched by Baton's client) and the same engines, in the same report format,
labelled "same-team runner, SIMULATED issuer". A case part that cannot run here is reported
NOT_RUN with its reason, never passed; exit 0 when no case failed.
`;

interface Parsed {
  readonly suite: ConformanceSuite;
  readonly out: string;
  readonly only: string[] | undefined;
  readonly engine: ConformanceEngine;
  readonly postgresUrl: string | undefined;
  readonly json: boolean;
}

function engineOf(engine: string | undefined, url: string | undefined): ConformanceEngine {
  if (engine === undefined || engine === 'sqlite') {
    if (url !== undefined) throw new BatonError('usage', '--postgres goes with --engine postgres');
    return 'sqlite';
  }
  if (engine !== 'postgres') throw new BatonError('usage', '--engine must be sqlite or postgres');
  if (url === undefined || !/^postgres(ql)?:\/\//.test(url)) {
    throw new BatonError('usage', '--engine postgres needs --postgres postgres://…');
  }
  return 'postgres';
}

function parse(argv: string[]): Parsed {
  const { values } = parseOptions({
    args: argv,
    options: {
      suite: { type: 'string' },
      engine: { type: 'string' },
      postgres: { type: 'string' },
      out: { type: 'string' },
      case: { type: 'string', multiple: true },
      json: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  });
  const engine = engineOf(values.engine, values.postgres);
  const suite = values.suite ?? 'aoc';
  if (suite !== 'aoc' && suite !== 'harness') throw new BatonError('usage', '--suite must be aoc or harness');
  const suites = { aoc: CASES, harness: HARNESS_CASES } as const;
  for (const id of values.case ?? []) {
    if (suites[suite].some((c) => c.id === id)) continue;
    // A case of the other suite is named as such, with the flag that runs it.
    const other = suite === 'aoc' ? 'harness' : 'aoc';
    if (suites[other].some((c) => c.id === id)) {
      throw new BatonError('usage', `case ${id} belongs to --suite ${other}, not --suite ${suite}`);
    }
    throw new BatonError('usage', `unknown case ${id.slice(0, 32)}`);
  }
  return {
    suite,
    out: values.out ?? './conformance-report',
    // A case named twice runs once: the run expects one report per distinct id (both suites).
    only: values.case === undefined ? undefined : [...new Set(values.case)],
    engine,
    postgresUrl: values.postgres,
    json: values.json === true,
  };
}

async function run(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  // A first SIGINT/SIGTERM stops the run after the current case, drops the scratch database and
  // removes the temp folder, then exits 130/143; a second one ends it at once.
  return runStoppable(io, 'removing the scratch store', (stop) => runSuite(argv, io, stop));
}

async function runSuite(argv: string[], io: CliIo, stop: AbortSignal): Promise<number> {
  try {
    const { suite, out, only, engine, postgresUrl, json } = parse(argv);
    // Before any case runs: an --out that is a file, or cannot be made, is refused now.
    checkOutputFolder(out);
    const where =
      postgresUrl === undefined ? 'SQLite' : `PostgreSQL at ${redactUrl(postgresUrl)}, scratch database`;
    const say = (text: string): void => (json ? io.stderr(text) : io.stdout(text));
    say(
      suite === 'aoc'
        ? `AOC conformance — same-team runner, synthetic provider (sandbox over HTTP, ${where})\n`
        : `Harness conformance — same-team runner, SIMULATED issuer (reference issuer on loopback, ${where})\n`,
    );
    const result = await (suite === 'aoc' ? runConformance : runHarnessConformance)({
      out,
      engine,
      ...(postgresUrl !== undefined && { postgresUrl }),
      ...(only && { only }),
      onProgress: (line) => say(`${line}\n`),
      onScratch: (name) => say(`scratch database ${name} (dropped at the end of the run)\n`),
      stop,
    });
    if (json) {
      printJson(io, { report: result.report, files: result.files });
      return result.passed ? EXIT.ok : EXIT.negative;
    }
    const s = result.report.summary;
    io.stdout(
      `${s.pass}/${s.total} passed, ${s.fail} failed, ${s.unsupported} unsupported${suite === 'harness' ? `, ${s.notRun} NOT_RUN` : ''}\n`,
    );
    io.stdout(`report: ${result.files.json}\n        ${result.files.markdown}\n`);
    return result.passed ? EXIT.ok : EXIT.negative;
  } catch (error) {
    if (stop.aborted) throw error; // runStoppable reports the stop
    return reportError(error, io);
  }
}

export const conformanceCommand: Command = {
  name: 'conformance',
  summary: 'Run the AOC (or --suite harness) conformance cases and write a report.',
  usage: USAGE,
  run,
};
