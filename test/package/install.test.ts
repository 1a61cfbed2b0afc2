/**
 * The package as a user gets it (issue 10, part 2): packed, installed into a separate project with
 * `npm install <tarball> --ignore-scripts` (so better-sqlite3 is never compiled there), and
 * `import { HttpBatonClient } from 'baton-aoc/client'` then works against a real Baton server —
 * while a loader hook and a process.dlopen wrapper record that the import loaded no native
 * module, no Fastify and no database driver.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/core/clock.js';
import { buildServer, createToken, openBaton } from '../../src/server/index.js';
import { runWatched } from '../support/child.js';
import { repoRoot } from '../support/paths.js';
import { NPM_DEADLINE_MS, npmEnv, pack, tempDir } from './support.js';

/** Preloaded with --import: records every module resolved (ESM), required (CJS) and dlopen'ed. */
const RECORDER = `
import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
const log = process.env.LOAD_LOG;
const Module = createRequire(import.meta.url)('node:module');
const load = Module._load;
Module._load = function (request, parent, isMain) {
  appendFileSync(log, 'require ' + request + '\\n');
  return load.call(this, request, parent, isMain);
};
const dlopen = process.dlopen;
process.dlopen = function (module, filename, ...rest) {
  appendFileSync(log, 'dlopen ' + filename + '\\n');
  return dlopen.call(this, module, filename, ...rest);
};
register('./hooks.mjs', import.meta.url);
`;

const HOOKS = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.LOAD_LOG, 'resolve ' + resolved.url + '\\n');
  return resolved;
}
`;

/** What a worker would write: import the SDK from the package name, make one call. */
const CONSUMER = `
const { HttpBatonClient, BatonError, isBatonError } = await import('baton-aoc/client');
const client = new HttpBatonClient({ baseUrl: process.argv[2], token: process.argv[3], timeoutMs: 20000 });
const counts = await client.counts();
const refused = await client.counts({ signal: AbortSignal.abort() }).catch((e) => e);
console.log(JSON.stringify({ total: counts.total, refused: isBatonError(refused) ? refused.code : String(refused), typed: refused instanceof BatonError }));
`;

async function startBaton(t: TestContext, dir: string) {
  const opened = await openBaton({ kind: 'sqlite', path: join(dir, 'baton.db') });
  const app = buildServer({ engine: opened.engine, service: opened.service });
  t.after(async () => {
    await app.close();
    await opened.close();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const { token } = await createToken(
    opened.engine,
    { role: 'operator' },
    { clock: systemClock, actor: 'test' },
  );
  return { url: `http://127.0.0.1:${port}`, token };
}

/**
 * A new project folder with the packed tarball installed as a user gets it, without install
 * scripts (so better-sqlite3 is never compiled there).
 */
async function installedProject(t: TestContext, name: string): Promise<string> {
  const packed = await pack(t);
  const project = tempDir(t, `baton-${name}-`);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  const install = [
    'install',
    packed.tarball,
    '--ignore-scripts',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
  ];
  await runWatched('npm install <tarball>', 'npm', install, {
    cwd: project,
    env: npmEnv(),
    deadlineMs: NPM_DEADLINE_MS,
  });
  return project;
}

test('baton-aoc/client installed from the tarball (no install scripts) loads no native module, Fastify or driver, and works', async (t) => {
  const project = await installedProject(t, 'consumer');
  writeFileSync(join(project, 'recorder.mjs'), RECORDER);
  writeFileSync(join(project, 'hooks.mjs'), HOOKS);
  writeFileSync(join(project, 'consumer.mjs'), CONSUMER);
  const log = join(project, 'loads.log');
  writeFileSync(log, '');

  const baton = await startBaton(t, project);
  const run = await runWatched(
    'consumer',
    process.execPath,
    ['--import', './recorder.mjs', 'consumer.mjs', baton.url, baton.token],
    { cwd: project, env: { ...npmEnv(), LOAD_LOG: log } },
  );
  const answer = JSON.parse(run.lines.at(-1) ?? '') as { total: number; refused: string; typed: boolean };
  assert.deepEqual(answer, { total: 0, refused: 'client_aborted', typed: true });

  const loads = readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  const ours = loads.filter((l) => l.includes('/node_modules/baton-aoc/dist/src/client/sdk.js'));
  assert.ok(ours.length > 0, 'the recorder saw the SDK load (it works)');
  assert.deepEqual(
    loads.filter((l) => l.startsWith('dlopen ')),
    [],
    'no native addon was opened',
  );
  const forbidden =
    /\/node_modules\/(better-sqlite3|bindings|pg|pg-[^/]+|fastify|@fastify\/[^/]+|pino[^/]*)\/|^require (better-sqlite3|pg|fastify)$/;
  assert.deepEqual(
    loads.filter((l) => forbidden.test(l)),
    [],
    'no database driver, no Fastify',
  );
  const packages = new Set(
    loads.flatMap((l) => [...l.matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((m) => m[1] ?? '')),
  );
  t.diagnostic(
    `loaded from node_modules: ${[...packages].sort().join(', ')}; ${loads.length} loads recorded`,
  );
});

/** A strict consumer of the package root's types: what `tsc` reads when a user imports it. */
const TYPED_CONSUMER = `
import { InProcessBatonClient, openBaton, type BatonErrorCode } from 'baton-aoc';
export async function open(path: string): Promise<InProcessBatonClient | BatonErrorCode> {
  const opened = await openBaton({ kind: 'sqlite', path });
  await opened.close();
  return 'input_invalid';
}
`;

test('the package root type-checks in a strict consumer (skipLibCheck off) with only what npm installs for it', async (t) => {
  const project = await installedProject(t, 'typed-consumer');
  writeFileSync(join(project, 'consumer.ts'), TYPED_CONSUMER);
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        types: ['node'],
      },
      files: ['consumer.ts'],
    }),
  );
  // The repository's own compiler; every type the package's declarations name must come from the
  // consumer's node_modules (better-sqlite3's types were once a devDependency: TS7016 here).
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const checked = await runWatched('tsc -p consumer', process.execPath, [tsc, '-p', project], {
    cwd: project,
    env: npmEnv(),
    // A whole-program check of the package's declarations: under a loaded 2-core CI machine it
    // took over a minute (the default deadline), so it gets npm's.
    deadlineMs: NPM_DEADLINE_MS,
  }).then(
    () => 'ok',
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  assert.equal(checked, 'ok');
});
