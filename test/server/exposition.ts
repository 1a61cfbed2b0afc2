/** A strict reader of the Prometheus text exposition format 0.0.4, for the /metrics tests. */
import assert from 'node:assert/strict';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*"';
const SAMPLE = new RegExp(
  `^(${NAME})(?:\\{(${LABEL}(?:,${LABEL})*)?\\})? (-?[0-9.]+(?:e[+-]?[0-9]+)?|\\+Inf|-Inf|NaN)$`,
);

/** A strict reader of the text exposition format 0.0.4: every line must be HELP, TYPE or a sample. */
export function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/.exec(line);
    if (meta !== null) {
      if (meta[1] === 'TYPE') {
        assert.match(meta[3] ?? '', /^(counter|gauge|histogram|summary|untyped)$/);
        assert.ok(!types.has(meta[2] ?? ''), `TYPE ${meta[2]} declared once`);
        types.set(meta[2] ?? '', meta[3] ?? '');
      }
      continue;
    }
    const m = SAMPLE.exec(line);
    assert.ok(m !== null, `not a valid sample line: ${line}`);
    const labels = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
    ) as Record<string, string>;
    const name = m[1] ?? '';
    const family = name.replace(/_(bucket|sum|count)$/, '');
    assert.ok(types.has(name) || types.get(family) === 'histogram', `sample ${name} has a TYPE`);
    samples.push({ name, labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) });
  }
  return { types, samples };
}

export function value(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const s = samples.find(
    (x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v),
  );
  return s?.value ?? 0;
}
