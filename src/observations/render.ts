/**
 * Markdown and HTML renderings of the continuity report. The HTML is one self-contained file: no
 * script, no external asset; FIC_obs and CIF over time are inline SVG line charts.
 */
import type { ContinuityReport, SeriesPoint } from './coverage.js';
import type { Rational } from './rational.js';

const dec = (r: Rational | null, why = 'undefined'): string => (r === null ? `null (${why})` : r.decimal);

/** The records_source label in words (OBS-06 ¶17, B3.2). */
function source(r: ContinuityReport): string {
  switch (r.labels.records_source) {
    case 'baton_evidence_log':
      return 'Baton’s own evidence log';
    case 'includes_submitted_records':
      return `including ${r.records.submitted} submitted record(s) Baton did not observe`;
    case 'conflicts_with_evidence_log':
      return `the evidence log now contradicts ${r.records.conflicting.length} of them: conflicting_evidence, counted UNKNOWN`;
  }
}

function lines(r: ContinuityReport): string[] {
  const f = r.fic_obs;
  const c = r.cif;
  const bound =
    f.global_bound === null
      ? `none (${f.global_reason ?? 'unknown'})`
      : `[${f.global_bound.lower.decimal}, ${f.global_bound.upper.decimal}] (q = ${dec(f.q)})`;
  return [
    `# Continuity report — ${r.producer}`,
    '',
    `Generated ${r.generated_at}. Runner: ${r.labels.runner}; records: ${r.labels.records} (${source(r)}); independent reproduction: ${r.labels.independent_reproduction}.`,
    '',
    '## Records',
    '',
    `| total | handoff | revocation barrier | signed | corrections | producer key unpinned |`,
    `|---|---|---|---|---|---|`,
    `| ${r.records.total} | ${r.records.handoff} | ${r.records.revocation_barrier} | ${r.records.signed} | ${r.records.corrections} | ${r.records.producer_unpinned} |`,
    ...r.records.conflicting.map(
      (id) =>
        `- \`${id}\`: conflicting_evidence — the evidence log now gives other bytes (kept, counted UNKNOWN)`,
    ),
    '',
    '## FIC_obs (complete verified lineage)',
    '',
    `n = ${f.n} audited, v = ${f.v} verified, FIC_obs = ${dec(f.value, f.reason ?? 'undefined')}; global completeness bound: ${bound}.`,
    ...f.failures.map((x) => `- \`${x.occurrence}\` fails ${x.failed.join(', ')}`),
    '',
    '## CIF (never authorizes anything)',
    '',
    `complete: ${c.complete}; value: ${dec(c.value, `unresolved: ${c.unresolved.join(', ')}`)}; weights ${c.weights_version}.`,
    '',
    '| dimension | match | mismatch | unknown | d | unresolved |',
    '|---|---|---|---|---|---|',
    ...Object.entries(c.per_dimension).map(
      ([d, t]) => `| ${d} | ${t.match} | ${t.mismatch} | ${t.unknown} | ${dec(t.d)} | ${t.unresolved} |`,
    ),
    '',
    '## Event surfaces',
    '',
    ...r.event_surfaces.map((s) => `- ${s}`),
    '',
    '## Blind spots',
    '',
    ...r.blind_spots.bypass_paths.map((p) => `- bypass path ${p.kind}: ${p.status} — ${p.description}`),
    `- ${r.blind_spots.executor_local_code}`,
    `- ${r.blind_spots.memory}`,
    '',
    '## Retention, sampling, witnesses',
    '',
    `- retention: ${r.retention}`,
    `- sampling: ${r.sampling}`,
    ...r.witness_dependence.map((w) => `- witness: ${w}`),
    ...(r.planned_cases === null
      ? []
      : [
          '',
          '## Planned cases',
          '',
          `${r.planned_cases.planned} planned; ${Object.entries(r.planned_cases.byStatus)
            .map(([s, n]) => `${s} ${n}`)
            .join(
              ', ',
            )}; complete-case ${r.planned_cases.target} rate ${dec(r.planned_cases.completeCaseRate)}.`,
        ]),
    '',
  ];
}

export function renderMarkdown(r: ContinuityReport): string {
  return lines(r).join('\n');
}

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface ChartOptions {
  /** How to read the value: shown beside the latest one ("higher is better"). */
  readonly better: 'higher' | 'lower';
}

const hhmm = (at: string): string => at.slice(0, 16).replace('T', ' ');

/**
 * A line chart of one series in [0, 1], readable at a glance: the latest value in the caption,
 * which way is better, the first and last instants on the time axis. An undefined point (n = 0,
 * an unresolved CIF) is never drawn as a value: it is a hollow grey marker in its own
 * "undefined" lane under the axis, and the line breaks there.
 */
export function svgChart(
  title: string,
  points: readonly SeriesPoint[],
  pick: (p: SeriesPoint) => string | null,
  options: ChartOptions = { better: 'higher' },
): string {
  const w = 620;
  const h = 230;
  const left = 44;
  const right = 16;
  const top = 12;
  const plot = 150; // height of the value area
  const lane = top + plot + 22; // the "undefined" lane
  const x = (i: number): number =>
    left + (points.length <= 1 ? (w - left - right) / 2 : (i * (w - left - right)) / (points.length - 1));
  const y = (v: number): number => top + plot - v * plot;
  const marks: string[] = [];
  let path = '';
  points.forEach((p, i) => {
    const raw = pick(p);
    if (raw === null) {
      marks.push(
        `<circle cx="${x(i).toFixed(1)}" cy="${lane}" r="4" fill="none" stroke="#888" stroke-width="1.5"><title>${escapeHtml(p.label)} (${escapeHtml(p.at)}): undefined</title></circle>`,
      );
      path += ' ';
      return;
    }
    const v = Math.min(1, Math.max(0, Number(raw)));
    const cmd = path.trim() === '' || path.endsWith(' ') ? 'M' : 'L';
    path += `${cmd}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    marks.push(
      `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3.5" fill="#2060c0"><title>${escapeHtml(p.label)} (${escapeHtml(p.at)}): ${raw}</title></circle>`,
    );
  });
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (v) =>
        `<line x1="${left}" x2="${w - right}" y1="${y(v)}" y2="${y(v)}" stroke="${v === 0 ? '#999' : '#e4e4e4'}"/><text x="${left - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end">${v}</text>`,
    )
    .join('');
  const axis =
    `<text x="${left - 6}" y="${lane + 4}" font-size="10" text-anchor="end" fill="#888">undef.</text>` +
    (points.length === 0
      ? `<text x="${w / 2}" y="${top + plot / 2}" font-size="12" text-anchor="middle" fill="#888">no handoff yet</text>`
      : `<text x="${left}" y="${h - 4}" font-size="11">${escapeHtml(hhmm(points[0]?.at ?? ''))}</text>` +
        `<text x="${w - right}" y="${h - 4}" font-size="11" text-anchor="end">${escapeHtml(hhmm(points.at(-1)?.at ?? ''))} · ${points.length} handoff(s)</text>`);
  const last = points.at(-1);
  const latest = last === undefined ? null : pick(last);
  const caption = `${escapeHtml(title)} — latest: <strong>${latest === null ? 'undefined' : escapeHtml(latest)}</strong> (${options.better} is better)`;
  return `<figure><figcaption>${caption}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="${escapeHtml(title)}">${grid}${axis}<path d="${path.trim()}" fill="none" stroke="#2060c0" stroke-width="2"/>${marks.join('')}</svg></figure>`;
}

function markdownToHtml(md: string): string {
  const out: string[] = [];
  let inList = false;
  let inTable = false;
  for (const line of md.split('\n')) {
    const close = (): void => {
      if (inList) out.push('</ul>');
      if (inTable) out.push('</table>');
      inList = inTable = false;
    };
    if (line.startsWith('|')) {
      if (/^\|[-|]+\|$/.test(line)) continue;
      if (!inTable) {
        close();
        out.push('<table>');
        inTable = true;
      }
      const cells = line
        .slice(1, -1)
        .split('|')
        .map((c) => `<td>${escapeHtml(c.trim())}</td>`);
      out.push(`<tr>${cells.join('')}</tr>`);
    } else if (line.startsWith('- ')) {
      if (!inList) {
        close();
        out.push('<ul>');
        inList = true;
      }
      out.push(`<li>${escapeHtml(line.slice(2))}</li>`);
    } else {
      close();
      if (line.startsWith('## ')) out.push(`<h2>${escapeHtml(line.slice(3))}</h2>`);
      else if (line.startsWith('# ')) out.push(`<h1>${escapeHtml(line.slice(2))}</h1>`);
      else if (line.trim() !== '') out.push(`<p>${escapeHtml(line)}</p>`);
    }
  }
  return out.join('\n');
}

export function renderHtml(r: ContinuityReport): string {
  const charts = [
    svgChart(
      'FIC_obs after each handoff (share of audited entries with complete verified lineage)',
      r.series,
      (p) => p.fic,
      { better: 'higher' },
    ),
    svgChart(
      'CIF after each handoff (weighted mismatch share; undefined = a required dimension unresolved)',
      r.series,
      (p) => p.cif,
      { better: 'lower' },
    ),
  ].join('\n');
  const [title, ...rest] = renderMarkdown(r).split('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Continuity report — ${escapeHtml(r.producer)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em}table{border-collapse:collapse}td{border:1px solid #ccc;padding:2px 6px}figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:4px}</style>
</head><body>
${markdownToHtml(title ?? '')}
${charts}
${markdownToHtml(rest.join('\n'))}
</body></html>
`;
}
