/**
 * `baton apply FILE` against a REAL server (SQLite file, 127.0.0.1) and a REAL sandbox: the first
 * apply creates the domain, the pinned profile, the authority and the operator token (written to
 * a 0600 file, and usable); the second changes nothing and says "unchanged"; a conflicting change
 * is refused with config_conflict and applies nothing — not even its harmless parts; tokens are
 * never re-minted.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startApi } from '../server/helpers.js';
import { baton, exampleConfig, PROFILE_FILE, startSandbox, tempDir, writeConfig } from './support.js';

interface TokensFile {
  format: string;
  tokens: { name: string; role: string; id: string; token: string }[];
}

const readTokens = (file: string): TokensFile => JSON.parse(readFileSync(file, 'utf8')) as TokensFile;

test('apply creates everything once, then says unchanged and changes no row', async (t) => {
  const api = await startApi(t);
  const sandbox = await startSandbox(t);
  const dir = tempDir(t);
  const file = writeConfig(dir, exampleConfig(sandbox.url));
  const args = ['apply', file, '--url', api.url, '--token', api.admin];

  const first = await baton(args);
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, /^domain first-call: created$/m);
  assert.match(first.out, /^profile sandbox-payments-ed25519@2026-01-01\.[0-9a-f]{8}: created$/m);
  assert.match(first.out, /^authority first-call-payments: created$/m);
  assert.match(first.out, /^token first-call-operator: created$/m);
  assert.match(first.out, /^applied: 4 changes$/m);

  // The token went to the file named in the config, beside it, mode 0600, and nowhere else.
  const tokensPath = join(dir, 'first-call.tokens.json');
  assert.equal(statSync(tokensPath).mode & 0o777, 0o600);
  const tokens = readTokens(tokensPath);
  assert.equal(tokens.tokens.length, 1);
  const operator = tokens.tokens[0]?.token ?? '';
  assert.ok(!first.out.includes(operator) && !first.err.includes(operator), 'the secret is not printed');
  assert.equal((await api.call('GET', '/v1/counts', { token: operator })).status, 200, 'the token works');

  // The profile is pinned to THIS sandbox: its key and its origin.
  const [id, version] = (/profile (\S+)@(\S+): created/.exec(first.out) ?? []).slice(1);
  const registered = await api.service.getProfile(id ?? '', version ?? '');
  const source = registered.document.statusSources.find((s) => s.kind === 'lookup_by_key');
  assert.ok(source?.url.startsWith(`${sandbox.url}/`));
  assert.deepEqual(source?.authentication, {
    kind: 'ed25519',
    kid: sandbox.verification.ed25519?.kid,
    publicKey: sandbox.verification.ed25519?.jwk.x,
  });

  const before = await api.snapshot();
  const second = await baton(args);
  assert.equal(second.code, 0, second.err);
  assert.equal((second.out.match(/: unchanged$/gm) ?? []).length, 4);
  assert.match(second.out, /^unchanged: nothing to apply$/m);
  assert.equal(await api.snapshot(), before, 'the second apply wrote nothing');
  assert.deepEqual(readTokens(tokensPath), tokens, 'no token was re-minted');
});

test('a conflicting change is config_conflict and nothing is applied, not even the harmless parts', async (t) => {
  const api = await startApi(t);
  const sandbox = await startSandbox(t);
  const dir = tempDir(t);
  const config = exampleConfig(sandbox.url);
  const file = writeConfig(dir, config);
  assert.equal((await baton(['apply', file, '--url', api.url, '--token', api.admin])).code, 0);
  const before = await api.snapshot();

  const changed = {
    ...config,
    domain: {
      ...(config['domain'] as object),
      limits: { ...(config['domain'] as { limits: object }).limits, maxPendingPerLineage: 3 },
    },
    authorities: [
      { id: 'first-call-payments', unit: 'usd_cents', total: 100000 },
      { id: 'another-budget', unit: 'eur_cents', total: 5 },
    ],
    tokens: {
      file: 'first-call.tokens.json',
      create: [
        { name: 'first-call-operator', role: 'admin' },
        { name: 'new-one', role: 'operator' },
      ],
    },
  };
  const conflicting = writeConfig(dir, changed, 'changed.json');
  const r = await baton(['apply', conflicting, '--url', api.url, '--token', api.admin]);
  assert.equal(r.code, 1, r.out);
  assert.match(r.err, /^error: config_conflict: nothing applied: /m);
  assert.match(r.err, /authority first-call-payments: exists with unit EUR-cents/);
  assert.match(r.err, /token first-call-operator: an unrevoked token of this name has another role/);
  assert.equal(
    await api.snapshot(),
    before,
    'the domain update and the new budget and token were not applied',
  );
});

test('a profile version registered with another document is config_conflict (profiles are immutable)', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const doc = JSON.parse(readFileSync(PROFILE_FILE, 'utf8')) as Record<string, unknown>;
  const base = { format: 'baton.config/1', profiles: [{ document: doc }] };
  const args = (f: string): string[] => ['apply', f, '--url', api.url, '--token', api.operator];
  assert.equal((await baton(args(writeConfig(dir, base)))).code, 0);
  const before = await api.snapshot();
  const edited = { ...doc, environment: 'sandbox-2' };
  const r = await baton(args(writeConfig(dir, { ...base, profiles: [{ document: edited }] }, 'b.json')));
  assert.equal(r.code, 1);
  assert.match(
    r.err,
    /config_conflict: nothing applied: profile sandbox-payments-ed25519@2026-01-01: registered with another document/,
  );
  assert.equal(await api.snapshot(), before);
});

test('a bad file changes nothing: duplicate members, schema breaks and bad profiles exit 2', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const before = await api.snapshot();
  const cases: [string, RegExp][] = [
    ['{"format":"baton.config/1","format":"baton.config/1"}', /json_duplicate_member/],
    [
      '{"format":"baton.config/1","authorities":[{"id":"a","unit":"u","total":0}]}',
      /config_invalid: \$\.authorities\[0\]\.total/,
    ],
    [
      '{"format":"baton.config/1","profiles":[{"document":{"format":"nope"}}]}',
      /config_invalid: \$\.profiles\[0\]/,
    ],
    [
      '{"format":"baton.config/1","profiles":[{"file":"missing.json"}]}',
      /config_invalid: \$\.profiles\[0\]\.file/,
    ],
  ];
  for (const [text, expected] of cases) {
    const file = join(dir, 'bad.json');
    writeFileSync(file, text);
    const r = await baton(['apply', file, '--url', api.url, '--token', api.admin]);
    assert.equal(r.code, 2, text);
    assert.match(r.err, expected);
  }
  assert.equal(await api.snapshot(), before);
});

test('without a tokens file a new token is printed once, and a re-apply never prints or mints it again', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const file = writeConfig(dir, {
    format: 'baton.config/1',
    tokens: { create: [{ name: 'ci', role: 'operator' }] },
  });
  const args = ['apply', file, '--url', api.url, '--token', api.admin];
  const first = await baton(args);
  assert.equal(first.code, 0, first.err);
  const token = /^token ci \(operator, shown once\): (btk\.\S+)$/m.exec(first.out)?.[1] ?? '';
  assert.equal((await api.call('GET', '/v1/counts', { token })).status, 200);
  const second = await baton(args);
  assert.match(second.out, /^token ci: unchanged$/m);
  assert.ok(!second.out.includes('btk.'), 'nothing printed again');
  const live = (await api.call('GET', '/v1/tokens', { token: api.admin })).body['tokens'] as {
    name: string;
  }[];
  assert.equal(live.filter((x) => x.name === 'ci').length, 1, 'minted once');
});

test('apply needs a token and a reachable server, and an operator may not configure the domain', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const config = exampleConfig('http://127.0.0.1:9');
  const file = writeConfig(dir, { format: 'baton.config/1', domain: config['domain'] });
  const noToken = await baton(['apply', file, '--url', api.url], '');
  assert.equal(noToken.code, 2);
  assert.match(noToken.err, /usage: a token is needed/);
  const operator = await baton(['apply', file, '--url', api.url, '--token', api.operator]);
  assert.equal(operator.code, 1);
  assert.match(operator.err, /^error: forbidden/m);
  const wrongToken = await baton(['apply', file, '--url', api.url, '--token', 'btk.nope']);
  assert.equal(wrongToken.code, 1);
  assert.match(wrongToken.err, /^error: unauthenticated/m);
});

/**
 * A real loopback proxy in front of the real server that answers 503 to the `nth` token mint
 * (POST /v1/tokens) and forwards everything else: the network failing half-way through an apply.
 */
async function failingNthMint(t: TestContext, upstream: string, nth: number): Promise<string> {
  let mints = 0;
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/v1/tokens' && ++mints === nth) {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"unavailable","message":"proxy: dropped"}}');
      return;
    }
    const out = request(
      `${upstream}${req.url ?? '/'}`,
      { method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', (e) => res.destroy(e));
    req.pipe(out);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  t.after(() => new Promise<void>((ok) => server.close(() => ok())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('an apply that fails after minting a token keeps that token: in the file, or shown once', async (t) => {
  const api = await startApi(t);
  const proxy = await failingNthMint(t, api.url, 2);
  const dir = tempDir(t);
  const tokens = {
    create: [
      { name: 'one', role: 'operator' },
      { name: 'two', role: 'operator' },
    ],
  };
  const withFile = writeConfig(dir, {
    format: 'baton.config/1',
    tokens: { ...tokens, file: 'ops.tokens.json' },
  });
  const failed = await baton(['apply', withFile, '--url', proxy, '--token', api.admin]);
  assert.equal(failed.code, 1, failed.err);
  assert.match(failed.err, /stopped after minting one: written to .*ops\.tokens\.json/);
  const kept = readTokens(join(dir, 'ops.tokens.json')).tokens;
  assert.deepEqual(
    kept.map((k) => k.name),
    ['one'],
  );
  assert.equal((await api.call('GET', '/v1/counts', { token: kept[0]?.token ?? '' })).status, 200);
  assert.ok(!failed.err.includes('btk.'), 'no secret in the error');
  // The second run mints only what is missing, and the file keeps both.
  const again = await baton(['apply', withFile, '--url', api.url, '--token', api.admin]);
  assert.equal(again.code, 0, again.err);
  assert.deepEqual(
    readTokens(join(dir, 'ops.tokens.json')).tokens.map((k) => k.name),
    ['one', 'two'],
  );

  // Without a file: the first token's line is already out when the second mint fails.
  const proxy2 = await failingNthMint(t, api.url, 2);
  const bare = writeConfig(
    dir,
    {
      format: 'baton.config/1',
      tokens: {
        create: [
          { name: 'three', role: 'operator' },
          { name: 'four', role: 'operator' },
        ],
      },
    },
    'bare.json',
  );
  const shown = await baton(['apply', bare, '--url', proxy2, '--token', api.admin]);
  assert.equal(shown.code, 1, shown.err);
  const token = /^token three \(operator, shown once\): (btk\.\S+)$/m.exec(shown.out)?.[1] ?? '';
  assert.equal((await api.call('GET', '/v1/counts', { token })).status, 200);
  assert.match(shown.err, /stopped after minting three: shown once/);
  assert.ok(!shown.err.includes('btk.'), 'no secret in the error');
});

test('reordering the bypass paths (a set: each kind once) is unchanged and writes no domain version', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const domain = exampleConfig('http://127.0.0.1:9')['domain'] as { limits: object; bypassPaths: object[] };
  const args = (f: string): string[] => ['apply', f, '--url', api.url, '--token', api.admin];
  const base = { format: 'baton.config/1', domain };
  assert.equal((await baton(args(writeConfig(dir, base)))).code, 0);
  const before = await api.snapshot();
  const reversed = { ...base, domain: { ...domain, bypassPaths: [...domain.bypassPaths].reverse() } };
  const r = await baton(args(writeConfig(dir, reversed, 'reversed.json')));
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^domain first-call: unchanged$/m);
  assert.equal(await api.snapshot(), before, 'no new domain version, no evidence event');

  // Reordered with a real change: updated once, then the same file is unchanged.
  const raised = {
    ...reversed,
    domain: { ...reversed.domain, limits: { ...domain.limits, maxPendingPerLineage: 12 } },
  };
  const file = writeConfig(dir, raised, 'raised.json');
  assert.match((await baton(args(file))).out, /^domain first-call: updated$/m);
  const updated = await api.snapshot();
  const again = await baton(args(file));
  assert.match(again.out, /^domain first-call: unchanged$/m);
  assert.equal(await api.snapshot(), updated);
});
