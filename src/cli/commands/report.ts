/**
 * `baton report` (B6, B3.8, OBS-18): project Baton's handoff records, then write the continuity
 * report — records, FIC_obs with its bound, CIF, event surfaces, blind spots, retention, sampling,
 * witness dependence — as JSON, Markdown, or one self-contained HTML file with SVG charts.
 */
import { BatonError } from '../../core/errors.js';
import { renderHtml, renderMarkdown } from '../../observations/index.js';
import { reportError, wantsHelp, type Command } from '../command.js';
import { EXIT } from '../io.js';
import { checkOutputFile, writeOutputFile } from '../output-files.js';
import { ficQuery, withContinuity } from './observe.js';
import { parse } from './store-args.js';
import { STORE_OPTIONS, STORE_USAGE } from './store-choice.js';

const USAGE = `usage: baton report [store] [--format json|md|html] [--out FILE] [--lineage L] [--from T] [--to T] [--sample N --seed S]

Project Baton's handoff records (idempotent), then write the continuity report: records written,
FIC_obs (with its global bound only when every bypass path is disclosed absent), CIF (never an
authorization), event surfaces, blind spots, retention, sampling and witness dependence. The HTML
form is one self-contained file with FIC_obs and CIF over time as charts. Default: json on stdout.
--lineage, --from and --to scope FIC_obs, CIF and the charts alike (the record counts are of every
stored record); --sample N --seed S samples FIC_obs.
--out FILE: its folder must exist; checked before the store is opened, written through FILE.partial
and renamed over FILE when complete (an existing FILE is replaced).
The store must exist already, with its domain key (neither is created here). Once it is open, one
line on stderr says the projection runs (a large evidence log takes a while).
${STORE_USAGE}
`;

const FORMATS = ['json', 'md', 'html'] as const;

export const reportCommand: Command = {
  name: 'report',
  summary: 'The continuity report: handoff records, FIC_obs, CIF, coverage and blind spots.',
  usage: USAGE,
  async run(argv, io) {
    if (wantsHelp(argv)) {
      io.stdout(USAGE);
      return EXIT.ok;
    }
    try {
      const { values } = parse({
        args: argv,
        strict: true,
        options: {
          ...STORE_OPTIONS,
          format: { type: 'string' },
          out: { type: 'string' },
          lineage: { type: 'string' },
          from: { type: 'string' },
          to: { type: 'string' },
          sample: { type: 'string' },
          seed: { type: 'string' },
        },
      });
      const format = values.format ?? 'json';
      if (!(FORMATS as readonly string[]).includes(format))
        throw new BatonError('usage', '--format must be json, md or html');
      // Before the store is opened (and the records projected): an --out that cannot be written.
      if (values.out !== undefined) checkOutputFile(values.out);
      return await withContinuity(values, io, async (c) => {
        const report = await c.report(ficQuery(values));
        const text =
          format === 'html'
            ? renderHtml(report)
            : format === 'md'
              ? renderMarkdown(report)
              : `${JSON.stringify(report, null, 2)}\n`;
        if (values.out === undefined) io.stdout(text);
        else {
          writeOutputFile(values.out, text);
          io.stdout(
            `wrote ${values.out}: ${report.records.handoff} handoff record(s), ${report.records.total} in all\n`,
          );
        }
        return EXIT.ok;
      });
    } catch (error) {
      return reportError(error, io);
    }
  },
};
