/**
 * The HTML report's charts (issue 12 §4): FIC_obs and CIF over time, readable at a glance — the
 * latest value and which way is better in the caption, the time axis, and an undefined point kept
 * out of the value area (never drawn as 0, which for CIF would read as "no mismatch").
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import {
  buildReport,
  cif,
  ficObs,
  parseWeights,
  renderMarkdown,
  svgChart,
  type SeriesPoint,
} from '../../src/observations/index.js';

const points: SeriesPoint[] = [
  { at: '2026-11-02T08:00:00Z', label: 'g1', fic: '1.000000', cif: '0.250000' },
  { at: '2026-11-02T08:05:00Z', label: 'g2', fic: null, cif: null },
  { at: '2026-11-02T08:10:00Z', label: 'g3', fic: '0.500000', cif: '0.125000' },
];

test('report chart: caption names the latest value and the better direction; the axis names the first and last instants', () => {
  const svg = svgChart('CIF', points, (p) => p.cif, { better: 'lower' });
  assert.match(svg, /latest: <strong>0\.125000<\/strong> \(lower is better\)/);
  assert.match(svg, />2026-11-02 08:00</);
  assert.match(svg, />2026-11-02 08:10 · 3 handoff\(s\)</);
  assert.doesNotMatch(svg, /<script|https?:\/\/(?!www\.w3\.org)/);
});

test('report chart: an undefined point sits in the "undefined" lane below the axis and breaks the line', () => {
  const svg = svgChart('CIF', points, (p) => p.cif, { better: 'lower' });
  const zeroY = /<line x1="44" x2="604" y1="([\d.]+)" y2="[\d.]+" stroke="#999"\/>/.exec(svg)?.[1];
  assert.ok(zeroY !== undefined, 'the zero axis line');
  const hollow =
    /<circle cx="[\d.]+" cy="([\d.]+)" r="4" fill="none"[^>]*><title>g2 \([^)]*\): undefined<\/title>/.exec(
      svg,
    );
  assert.ok(hollow, svg);
  assert.ok(Number(hollow[1]) > Number(zeroY), 'below the zero line, not on it');
  const d = /<path d="([^"]*)"/.exec(svg)?.[1] ?? '';
  assert.equal((d.match(/M/g) ?? []).length, 2, 'two segments: the line breaks at the undefined point');
  assert.equal((d.match(/L/g) ?? []).length, 0);
});

test('report chart: no points says so instead of drawing an empty line', () => {
  assert.match(
    svgChart('FIC_obs', [], (p) => p.fic),
    /no handoff yet/,
  );
});

test('B3.8: revocation_barrier counts Baton’s own signed barrier records, as handoff does, in the JSON and the table', () => {
  const baton = 'urn:baton:d';
  const rec = (event_type: string, producer: string, signed: boolean) => ({
    event_type,
    producer,
    signed,
    correction: false,
    verification: 'OBSERVED_WITH_STATED_EVIDENCE' as const,
  });
  const report = buildReport({
    now: '2026-11-02T08:00:00Z',
    producer: baton,
    records: [
      rec('revocation_barrier', baton, true),
      rec('revocation_barrier', baton, true),
      rec('revocation_barrier', 'urn:baton:local', false),
      rec('revocation_barrier', 'urn:example:acme', true),
      rec('handoff', baton, true),
    ],
    fic: ficObs({ universe: 0, audited: [], sample: null, everyBypassAbsent: false }),
    cif: cif([], parseWeights({ authority: '1' }), [], 'v1'),
    series: [],
    bypassPaths: [],
  });
  assert.deepEqual(
    [
      report.records.handoff,
      report.records.revocation_barrier,
      report.records.by_event_type['revocation_barrier'],
    ],
    [1, 2, 4],
  );
  assert.match(renderMarkdown(report), /\n\| 5 \| 1 \| 2 \| 4 \| 0 \| 0 \|/);
});
