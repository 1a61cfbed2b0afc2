/**
 * `baton conformance`: run AOC-CASE-001 … 012 against the real service (SQLite in a temp dir) and
 * the sandbox provider over HTTP, print one line per case and write report.json and report.md
 * (docs/conformance.md). Exit 0 only when every case passes.
 */
import { parseArgs } from 'node:util';
import { BatonError } from '../../core/errors.js';
import { reportError, wantsHelp, type Command } from '../command.js';
import { CASES, runConformance } from '../conformance/runner.js';
import { EXIT, type CliIo } from '../io.js';

const USAGE = `usage: baton conformance [--engine sqlite] [--out DIR] [--case AOC-CASE-0NN]...

Run the AOC conformance cases (AOC-CASE-001 … 012) against the real occurrences service on a
temporary SQLite file and the sandbox payments provider over HTTP on 127.0.0.1. Writes
DIR/report.json and DIR/report.md (default DIR: ./conformance-report), labelled
"same-team runner, synthetic provider". Exit 0 when every case passes, 1 otherwise.
`;

function parse(argv: string[]): { out: string; only: string[] | undefined } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        engine: { type: 'string' },
        out: { type: 'string' },
        case: { type: 'string', multiple: true },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (cause) {
    throw new BatonError('usage', 'unknown option or missing value', {}, { cause });
  }
  if ((values.engine ?? 'sqlite') !== 'sqlite') {
    throw new BatonError('usage', 'only --engine sqlite is supported by the conformance runner');
  }
  const ids = CASES.map((c) => c.id);
  for (const id of values.case ?? []) {
    if (!ids.includes(id)) throw new BatonError('usage', `unknown case ${id.slice(0, 32)}`);
  }
  return { out: values.out ?? './conformance-report', only: values.case };
}

async function run(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  try {
    const { out, only } = parse(argv);
    io.stdout('AOC conformance — same-team runner, synthetic provider (sandbox over HTTP, SQLite)\n');
    const result = await runConformance({
      out,
      ...(only && { only }),
      onProgress: (line) => io.stdout(`${line}\n`),
    });
    const s = result.report.summary;
    io.stdout(`${s.pass}/${s.total} passed, ${s.fail} failed, ${s.unsupported} unsupported\n`);
    io.stdout(`report: ${result.files.json}\n        ${result.files.markdown}\n`);
    return result.passed ? EXIT.ok : EXIT.negative;
  } catch (error) {
    return reportError(error, io);
  }
}

export const conformanceCommand: Command = {
  name: 'conformance',
  summary: 'Run the AOC conformance cases against the sandbox and write a report.',
  usage: USAGE,
  run,
};
