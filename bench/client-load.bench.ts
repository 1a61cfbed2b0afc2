/**
 * How long `import('baton-aoc/client')` takes in a fresh Node process (issue 10, part 2: target
 * under 50 ms), beside the package root, which brings the store, Fastify and the drivers.
 * Run: npm run build && node dist/bench/client-load.bench.js
 * Each sample is a new process that times its own dynamic import of the compiled entry
 * (performance.now() around `await import(…)`, so Node's own start-up is not counted), the two
 * entries alternating so load from other processes hits both alike; the figure is the median.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 15);
const TARGET_MS = 50;

// dist/bench/client-load.bench.js → dist/src/…; the compiled entries the package's "exports" name.
const entry = (path: string): string =>
  pathToFileURL(fileURLToPath(new URL(`../src/${path}`, import.meta.url))).href;
const ENTRIES = {
  client: entry('client/sdk.js'),
  root: entry('index.js'),
  // The floor on this machine now: one tiny module from disk (the loader's own cost under load).
  empty: entry('client/types.js'),
} as const;

function importMs(url: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(url)}); console.log(performance.now() - t);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return Number(out.trim());
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

if (!import.meta.url.endsWith('.js'))
  throw new Error('run the compiled benchmark (dist/bench), it imports dist/src');
const times: Record<keyof typeof ENTRIES, number[]> = { client: [], root: [], empty: [] };
for (let i = 0; i < SAMPLES; i++) {
  const order = i % 2 === 0 ? (['client', 'root', 'empty'] as const) : (['empty', 'root', 'client'] as const);
  for (const name of order) times[name].push(importMs(ENTRIES[name]));
}
const client = median(times.client);
const root = median(times.root);
const empty = median(times.empty);
const verdict = client < TARGET_MS ? 'meets' : 'ABOVE';
console.log(
  `import('baton-aoc/client'): median ${client.toFixed(1)} ms over ${SAMPLES} fresh processes (${verdict} target < ${TARGET_MS} ms; range ${Math.min(...times.client).toFixed(1)}-${Math.max(...times.client).toFixed(1)} ms)`,
);
console.log(`import('baton-aoc') (the root: store, drivers, Fastify): median ${root.toFixed(1)} ms`);
console.log(`import of one tiny module from disk (this machine's floor now): median ${empty.toFixed(1)} ms`);
console.log(
  JSON.stringify({
    bench: 'client-load',
    targetMs: TARGET_MS,
    clientMs: client,
    rootMs: root,
    emptyMs: empty,
  }),
);
