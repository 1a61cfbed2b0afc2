/**
 * Markdown and HTML renderings of the continuity report. The HTML is one self-contained file: no
 * script, no external asset; FIC_obs and CIF over time are inline SVG line charts.
 */
import type { ContinuityReport, SeriesPoint } from './coverage.js';
import type { Rational } from './rational.js';

const dec = (r: Rational | null, why = 'undefined'): string => (r === null ? `null (${why})` : r.decimal);

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
    `Generated ${r.generated_at}. Runner: ${r.labels.runner}; records: ${r.labels.records} (Baton’s own evidence log); independent reproduction: ${r.labels.independent_reproduction}.`,
    '',
    '## Records',
    '',
    `| total | handoff | signed | corrections |`,
    `|---|---|---|---|`,
    `| ${r.records.total} | ${r.records.handoff} | ${r.records.signed} | ${r.records.corrections} |`,
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

/** A line chart of one series in [0, 1]; null points are gaps, drawn as hollow markers at the base. */
export function svgChart(
  title: string,
  points: readonly SeriesPoint[],
  pick: (p: SeriesPoint) => string | null,
): string {
  const w = 560;
  const h = 200;
  const pad = 36;
  const x = (i: number): number =>
    pad + (points.length <= 1 ? (w - 2 * pad) / 2 : (i * (w - 2 * pad)) / (points.length - 1));
  const y = (v: number): number => h - pad - v * (h - 2 * pad);
  const marks: string[] = [];
  let path = '';
  points.forEach((p, i) => {
    const raw = pick(p);
    if (raw === null) {
      marks.push(
        `<circle cx="${x(i).toFixed(1)}" cy="${y(0).toFixed(1)}" r="4" fill="none" stroke="#999"><title>${escapeHtml(p.label)}: undefined</title></circle>`,
      );
      path += ' ';
      return;
    }
    const v = Number(raw);
    const cmd = path.trim() === '' || path.endsWith(' ') ? 'M' : 'L';
    path += `${cmd}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    marks.push(
      `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="4" fill="#2060c0"><title>${escapeHtml(p.label)}: ${raw}</title></circle>`,
    );
  });
  const grid = [0, 0.5, 1]
    .map(
      (v) =>
        `<line x1="${pad}" x2="${w - pad}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="4" y="${y(v) + 4}" font-size="11">${v}</text>`,
    )
    .join('');
  return `<figure><figcaption>${escapeHtml(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="${escapeHtml(title)}">${grid}<path d="${path.trim()}" fill="none" stroke="#2060c0" stroke-width="2"/>${marks.join('')}</svg></figure>`;
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
      'FIC_obs over time (share of audited entries with complete verified lineage)',
      r.series,
      (p) => p.fic,
    ),
    svgChart('CIF over time (mismatch share, weighted; hollow = unresolved)', r.series, (p) => p.cif),
  ].join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Continuity report — ${escapeHtml(r.producer)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em}table{border-collapse:collapse}td{border:1px solid #ccc;padding:2px 6px}figure{margin:1em 0}figcaption{font-weight:600}</style>
</head><body>
${charts}
${markdownToHtml(renderMarkdown(r))}
</body></html>
`;
}
