/**
 * `baton serve`: the HTTP API (docs/api.md) over SQLite or PostgreSQL until SIGINT or SIGTERM.
 * Runs the migrations at start. On a store with no active admin token it creates one and prints it
 * ONCE on stdout (only its digest is stored; `baton tokens create --role admin` makes another).
 * Structured logs (pino, authorization redacted) go to stderr, so stdout carries only the one-time
 * tokens and the listening line (with --json, one JSON line holding them all).
 */
import { existsSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { systemClock } from '../../core/clock.js';
import { BatonError } from '../../core/errors.js';
import { allowedHostNames, hostNameOf } from '../../core/http-host.js';
import { buildServer } from '../../server/app.js';
import { answerStartingUntil } from '../../server/starting.js';
import { openBaton, type OpenedBaton, type StoreChoice } from '../../server/open.js';
import { SCHEMA_WATCH_EVERY_MS } from '../../store/schema-watch.js';
import { SQLITE_WRITER_MODES, type SqliteWriterMode } from '../../store/sqlite-writer.js';
import { createToken } from '../../server/tokens.js';
import { hasActiveAdmin } from '../../store/principals.js';
import {
  envUsage,
  printJson,
  readInput,
  reportError,
  SIGNAL_EXIT,
  stopSignals,
  wantsHelp,
  type Command,
  type StopCause,
  type StopSignals,
} from '../command.js';
import { drain } from '../../server/shutdown.js';
import { Metrics } from '../../server/metrics.js';
import { wireMissionConsumer, type MissionConsumer } from '../../server/mission-consumer.js';
import { refsOutside, secretRefRefusal } from '../../server/mission-secrets.js';
import { parsePollInterval, startPollLoop, type PollLoop } from '../../server/mission-poll-loop.js';
import type { BackgroundReconciler } from '../../server/background-reconciler.js';
import { ReconcileMetrics } from '../../server/reconcile-metrics.js';
import { ReconciliationStore } from '../../store/reconciliation.js';
import { parseConcurrency, parseDuration, startServeReconciler } from '../reconcile-wiring.js';
import { parseMatrix, type PinnedMatrix } from '../../missions/index.js';
import {
  applyPrepared,
  checkTokensFile,
  describeOutcome,
  prepareConfig,
  printOnceLine,
  type PreparedConfig,
} from '../config/apply.js';
import type { CreatedPrincipalToken } from '../../client/index.js';
import { refuseIssuerRefs } from '../config/issuers.js';
import { storeTarget } from '../config/target.js';
import { EXIT, type CliIo } from '../io.js';
import { listenError, urlHost } from '../listen.js';
import { parse } from './store-args.js';
import { serveKeys } from './serve-credentials.js';
import { STORE_OPTIONS, STORE_USAGE, storeChoice } from './store-choice.js';

/** Where `serve`'s SQLite write connection lives unless told (decided by bench:peers, docs/scale.md). */
export const DEFAULT_SQLITE_WRITER: SqliteWriterMode = 'inline';

export const SERVE_OPTIONS = {
  ...STORE_OPTIONS,
  port: { type: 'string', env: 'BATON_PORT' },
  host: { type: 'string', env: 'BATON_HOST' },
  'allowed-host': { type: 'string', multiple: true },
  'log-level': { type: 'string', env: 'BATON_LOG_LEVEL' },
  'shutdown-timeout': { type: 'string', env: 'BATON_SHUTDOWN_TIMEOUT' },
  config: { type: 'string', env: 'BATON_CONFIG' },
  'stop-matrix': { type: 'string', env: 'BATON_STOP_MATRIX' },
  'missions-poll-every': { type: 'string', env: 'BATON_MISSIONS_POLL_EVERY' },
  credentials: { type: 'string', env: 'BATON_CREDENTIALS' },
  'secret-dir': { type: 'string', multiple: true },
  'reconcile-every': { type: 'string', env: 'BATON_RECONCILE_EVERY' },
  'reconcile-concurrency': { type: 'string', env: 'BATON_RECONCILE_CONCURRENCY' },
  json: { type: 'boolean' },
  'no-console': { type: 'boolean', env: 'BATON_NO_CONSOLE' },
  'secure-cookies': { type: 'boolean', env: 'BATON_SECURE_COOKIES' },
  'sqlite-writer': { type: 'string', env: 'BATON_SQLITE_WRITER', unlessGiven: ['postgres'] },
  'sqlite-checkpoints': { type: 'string', env: 'BATON_SQLITE_CHECKPOINTS', unlessGiven: ['postgres'] },
} as const;

const USAGE = `usage: baton serve [--db FILE | --postgres URL [--domain-key FILE]] [--port N] [--host H] [--allowed-host NAME]...
                   [--log-level fatal|error|warn|info|debug|trace|silent] [--shutdown-timeout S] [--config FILE] [--stop-matrix FILE]
                   [--credentials FILE] [--secret-dir DIR…] [--missions-poll-every DURATION]
                   [--reconcile-every DURATION [--reconcile-concurrency N]] [--json] [--no-console] [--secure-cookies]
                   [--sqlite-writer thread|inline] [--sqlite-checkpoints thread|sqlite]

Serve the HTTP API (docs/api.md) until SIGINT or SIGTERM, then stop accepting, finish every request
in flight and close the store (exit 0). Past --shutdown-timeout seconds (default 10) the remaining
connections are cut (exit 1); a second SIGINT or SIGTERM cuts them at once (exit 130 or 143).
Defaults: --db ./baton.db, --port 4000 (0 picks a free port), --host 127.0.0.1, --log-level info.
Migrations run at start. Once listening, if the store has no active admin token, one is created
and printed once. Then prints "baton listening on http://HOST:PORT (STORE)"; logs go to stderr as
JSON lines. --json prints, once ready, one JSON line instead (also of --config's token lines):
{"url":"http://HOST:PORT","store":"STORE","adminToken":"btk…"|null,"console":URL|null,
"configTokens":[{"name","role","id","token"}…]}. See docs/operations.md. The operator console
(docs/console.md) is served at URL/console/ and its address printed after the listening line
("console at URL/console/"); --no-console turns it off. --secure-cookies marks the console's
session cookie Secure on every answer: for a server behind a TLS-terminating proxy, where every
request arrives as plain http (without it, Secure only over https).
--allowed-host NAME (repeatable): a host name (or address) requests' Host header may carry besides
the loopback names (localhost, 127.0.0.1, [::1]) and H itself (a wildcard H such as 0.0.0.0 names
none); any other Host is refused 421 host_not_allowed on every path, before anything is read, so a
web page that rebinds its own name to this machine (DNS rebinding) reads and changes nothing.
Behind a proxy or on a wildcard address, name here every host clients reach the server by.
--config FILE applies a baton.config.json (docs/config.md) to the store once the port is bound and
before anything is served (requests meanwhile: 503), exactly as \`baton apply\` would (idempotent; a
conflict stops the start, exit 1); its summary goes to stderr. The file, and the tokens file it
names, are read and checked before the store is opened (a bad one: exit 2, config_invalid). A
token it mints with no tokens.file is printed once on stdout ("token NAME (ROLE, shown once): …");
with --json it is in configTokens, or, if the start then fails, in the one line {"configTokens":[…]}.
--stop-matrix: the harness's stop-behaviour matrix (docs/harness.md); one that misses the draft's
minimums exits 2 with stop_matrix_invalid before anything is opened. Default: baton-default@1.
--missions-poll-every: poll every pinned issuer whose stream is RFC 8936 poll (docs/missions.md) once
per DURATION (500ms, 30s, 2m; 100 ms..1 h). Without it, poll streams are not polled. Pushed SETs
(RFC 8935) arrive at POST /v1/missions/signals/{issuer} either way.
--secret-dir DIR (repeatable): a folder whose files the Mission issuer registry's secret references
(a pin's client.key_ref, a poll stream's pollBearerRef) may name as file:/absolute/path. Without
it no file may be named; env: references must name BATON_SECRET_* variables. A registration naming
anything else is refused (input_invalid; in --config, config_invalid, exit 2, before the store is
opened); an issuer pinned earlier that does is listed at start and its references are never read
(docs/missions.md "Secret references").
--credentials FILE: a baton.credentials/1 document mapping the secret ids provider profiles name
(webhook secrets, lookup credentials) to {"env": NAME} or {"file": PATH} references, resolved once
at start; a missing one exits with credential_unresolved before anything is opened
(docs/providers.md "Credentials"). Each entry lists the exact origins its value may be sent to
("origins": ["https://api.stripe.com"]; [] for a secret that only verifies, like a webhook secret):
an entry without them refuses the file (credentials_invalid), a call to any other origin is not
made (credential_origin_refused). Values are never logged, stored or shown.
--reconcile-every DURATION (500ms, 30s, 5m; 100ms..24h): a background reconciler asks the pinned
status sources of every unresolved occurrence, each by one server at a time (several servers on one
PostgreSQL share claims), with exponential backoff and jitter per occurrence, never sooner than a
provider's Retry-After; at most --reconcile-concurrency asks at once (default 4). Off by default;
--reconcile-concurrency without --reconcile-every is refused (input_invalid, exit 2).
POST /v1/webhooks/{profileId} (the providers' signed webhooks) is always mounted. docs/providers.md.
--sqlite-writer thread|inline (SQLite only; default ${DEFAULT_SQLITE_WRITER}): thread runs the write connection on a worker
thread, so COMMIT's fsync never blocks request handling; inline keeps it on the event loop. Same
durability (synchronous=FULL) and group commit either way. If the writer thread stops, every write
is refused (unavailable) and serve stops with exit 1 (docs/store.md "The writer thread").
--sqlite-checkpoints thread|sqlite (SQLite, inline writer; default thread): thread copies the WAL
into the database on a thread of its own, between COMMITs; sqlite leaves it to SQLite, inside the
COMMIT that crosses 1000 WAL frames, on the event loop (docs/store.md "Checkpoints off the request path").
With --sqlite-writer thread, whose COMMIT checkpoints off the event loop already, it is refused
(input_invalid, exit 2).
${STORE_USAGE}
${envUsage(SERVE_OPTIONS)}  BATON_HMAC_SECRETS       "secretId=BASE64URL[,secretId=BASE64URL…]": the HMAC secrets
                           that provider profiles pin by id, for reconcile (Ed25519 pins need none)
`;

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function port(text: string | undefined): number {
  if (text === undefined) return 4000;
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) > 65535)
    throw new BatonError('usage', '--port (BATON_PORT) must be 0..65535');
  return Number(text);
}

/** Seconds, whole or decimal, 0 < S <= 3600; returned in milliseconds. */
function shutdownTimeout(text: string | undefined): number {
  if (text === undefined) return 10_000;
  const s = Number(text);
  if (!/^[0-9]{1,4}(\.[0-9]{1,3})?$/.test(text) || s <= 0 || s > 3600) {
    throw new BatonError(
      'usage',
      '--shutdown-timeout (BATON_SHUTDOWN_TIMEOUT) must be seconds, 0 < S <= 3600',
    );
  }
  return Math.round(s * 1000);
}

/** The first admin token's secret, when the store had no active admin (shown once by the caller). */
async function firstAdmin(opened: OpenedBaton): Promise<string | null> {
  if (await hasActiveAdmin(opened.engine)) return null;
  const created = await createToken(
    opened.engine,
    { role: 'admin', name: 'initial-admin' },
    { clock: systemClock, actor: 'serve:first-start' },
  );
  return created.token;
}

interface Started {
  readonly opened: OpenedBaton;
  readonly app: ReturnType<typeof buildServer>;
  readonly timeoutMs: number;
  readonly poll: PollLoop | undefined;
  readonly reconciler: BackgroundReconciler | undefined;
}

function pollEvery(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parsePollInterval(text);
  if (ms === undefined)
    throw new BatonError(
      'usage',
      '--missions-poll-every (BATON_MISSIONS_POLL_EVERY) must be 100ms..60m, e.g. 30s',
    );
  return ms;
}

/** The pinned issuers at start, one line on stderr (docs/missions.md "Issuer registry"). */
async function describeIssuers(missions: MissionConsumer, io: CliIo): Promise<void> {
  const pinned = await missions.registry.list();
  const by = (d: string): number => pinned.filter((i) => i.pin.stream?.delivery === d).length;
  io.stderr(
    `mission issuers pinned: ${pinned.length} (push ${by('urn:ietf:rfc:8935')}, poll ${by('urn:ietf:rfc:8936')})\n`,
  );
  for (const i of pinned) {
    // Pinned before --secret-dir existed, or by a config applied at start: never read, and said so.
    const outside = refsOutside(i, missions.secretScope);
    for (const o of outside)
      io.stderr(
        `mission issuer ${i.issuer}: ${o.path.slice(2)}: ${secretRefRefusal(o.ref)}; it is never read\n`,
      );
    // A pin is immutable, the file it names is not: one that cannot be used now is said at start,
    // not first met as a check's 500 (docs/missions.md "The client key").
    const unusable = outside.length === 0 ? missions.unusableRef(i) : undefined;
    if (unusable !== undefined)
      io.stderr(
        `mission issuer ${i.issuer}: ${unusable.path.slice(2)}: ${unusable.reason}; its Status checks answer mission_client_key_unusable until it is fixed\n`,
      );
  }
}

/** `--secret-dir`: existing folders, made absolute (the scope compares absolute paths). */
function secretDirs(given: readonly string[] | undefined): string[] {
  return (given ?? []).map((d) => {
    const dir = resolve(d);
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new BatonError('usage', `--secret-dir ${d}: not a folder`);
    return dir;
  });
}

async function readStopMatrix(file: string | undefined, io: CliIo): Promise<PinnedMatrix | undefined> {
  return file === undefined ? undefined : parseMatrix(await readInput(file, io));
}

/**
 * `--config`: applied in process once the port is bound, before anything is served, so the ready
 * line means "configured" and a server that cannot listen has applied nothing. The file and its
 * tokens file were read and checked (and its profiles pinned) before the store was opened. A token it
 * mints with no tokens file is shown once: its line on stdout at once, or with --json kept in
 * `minted` for the one JSON line (the ready line, or the failure line if the start then fails).
 */
async function applyAtStart(
  prepared: PreparedConfig,
  opened: OpenedBaton,
  io: CliIo,
  minted: CreatedPrincipalToken[] | undefined,
  server: string,
): Promise<void> {
  const show = (t: CreatedPrincipalToken): void =>
    minted === undefined ? io.stdout(printOnceLine(t)) : void minted.push(t);
  const target = storeTarget(opened.engine, opened.service);
  // `server` in a tokens file entry: the address this server listens at (one file may serve several).
  const outcome = await applyPrepared(prepared, target, show, { server });
  io.stderr(describeOutcome(outcome));
}

/** `configTokens` of the --json line: the tokens --config minted and wrote to no file. */
function configTokensJson(minted: readonly CreatedPrincipalToken[]): object[] {
  return minted.map((t) => ({ name: t.name, role: t.role, id: t.id, token: t.token }));
}

/**
 * `--allowed-host`: each a host name or address as a `Host` header names it (IPv6 in brackets),
 * without a port (the port is never compared); anything else is refused (usage, exit 2) rather
 * than kept as a name no request could ever match.
 */
function allowedHosts(given: readonly string[] | undefined): string[] {
  return (given ?? []).map((name) => {
    if (hostNameOf(name) !== name.toLowerCase())
      throw new BatonError(
        'usage',
        `--allowed-host takes a host name or address without a port (e.g. baton.example, 192.0.2.10, [2001:db8::1])`,
      );
    return name.toLowerCase();
  });
}

/** `--sqlite-writer` (BATON_SQLITE_WRITER): for SQLite only; where its write connection lives. */
function withSqliteWriter(choice: StoreChoice, text: string | undefined): StoreChoice {
  if (text === undefined)
    return choice.kind === 'sqlite' ? { ...choice, writer: DEFAULT_SQLITE_WRITER } : choice;
  if (!(SQLITE_WRITER_MODES as readonly string[]).includes(text)) {
    throw new BatonError('usage', '--sqlite-writer (BATON_SQLITE_WRITER) must be thread or inline');
  }
  if (choice.kind !== 'sqlite') throw new BatonError('usage', '--sqlite-writer is for SQLite (--db)');
  return { ...choice, writer: text as SqliteWriterMode };
}

/** `--sqlite-checkpoints` (BATON_SQLITE_CHECKPOINTS): for SQLite only; who runs WAL checkpoints. */
function withCheckpoints(choice: StoreChoice, text: string | undefined): StoreChoice {
  if (text === undefined) return choice;
  if (text !== 'thread' && text !== 'sqlite') {
    throw new BatonError('usage', '--sqlite-checkpoints (BATON_SQLITE_CHECKPOINTS) must be thread or sqlite');
  }
  if (choice.kind !== 'sqlite') throw new BatonError('usage', '--sqlite-checkpoints is for SQLite (--db)');
  // The engine runs its checkpoint thread for the inline writer only (src/store/sqlite.ts): the
  // writer thread's COMMIT, checkpoint included, is off the event loop already. Accepted with it,
  // the flag would do nothing, whatever it said.
  if (choice.writer === 'thread')
    throw new BatonError(
      'input_invalid',
      '--sqlite-checkpoints (BATON_SQLITE_CHECKPOINTS) needs the inline writer (--sqlite-writer inline): with --sqlite-writer thread (BATON_SQLITE_WRITER) SQLite checkpoints inside the writer thread’s COMMIT, off the event loop, and the flag would do nothing',
    );
  return { ...choice, checkpoints: text };
}

/** `--reconcile-concurrency` bounds the background reconciler, which only `--reconcile-every` starts. */
function refuseConcurrencyAlone(every: number | undefined, concurrency: string | undefined): void {
  if (every === undefined && concurrency !== undefined)
    throw new BatonError(
      'input_invalid',
      '--reconcile-concurrency (BATON_RECONCILE_CONCURRENCY) needs --reconcile-every (BATON_RECONCILE_EVERY): without it no background reconciler runs and the flag would do nothing',
    );
}

/**
 * Resolves when the store became unusable under the server (its SQLite writer thread stopped, or a
 * newer Baton migrated it), said on stderr.
 */
async function storeFailure(opened: OpenedBaton, io: CliIo): Promise<'store failed'> {
  const error = await (opened.failed ?? new Promise<never>(() => undefined));
  io.stderr(`baton: ${error.code}: ${error.message}; refusing every request to the store and stopping\n`);
  return 'store failed';
}

/**
 * Open, listen, then (only once listening) apply --config and mint the first admin token, and
 * print the address. `stopping` aborts at the first stop signal: the waits of a start (a sandbox
 * still starting) end there, and nothing more is done.
 */
async function start(argv: string[], io: CliIo, stopping: AbortSignal): Promise<Started> {
  const { values } = parse({ args: argv, strict: true, allowPositionals: false, options: SERVE_OPTIONS });
  const level = values['log-level'] ?? 'info';
  if (!LEVELS.includes(level))
    throw new BatonError('usage', `--log-level (BATON_LOG_LEVEL) must be one of ${LEVELS.join(', ')}`);
  const host = values.host ?? '127.0.0.1';
  const hostNames = allowedHostNames(host, allowedHosts(values['allowed-host']));
  const wanted = port(values.port);
  const timeoutMs = shutdownTimeout(values['shutdown-timeout']);
  const pollMs = pollEvery(values['missions-poll-every']);
  const every = values['reconcile-every'];
  const everyMs =
    every === undefined ? undefined : parseDuration(every, '--reconcile-every (BATON_RECONCILE_EVERY)');
  const concurrency = parseConcurrency(values['reconcile-concurrency']);
  refuseConcurrencyAlone(everyMs, values['reconcile-concurrency']);
  const keys = await serveKeys(values.credentials, io);
  const dirs = secretDirs(values['secret-dir']);
  // HAR-25 / A3.10: an invalid matrix refuses to start (exit 2), before the store is touched.
  const stopMatrix = await readStopMatrix(values['stop-matrix'], io);
  const choice = withCheckpoints(
    withSqliteWriter(storeChoice(values), values['sqlite-writer']),
    values['sqlite-checkpoints'],
  );
  // The config file too is read and checked (its profiles pinned) before the store is touched: a
  // bad one exits 2 (config_invalid) having created nothing.
  const prepared =
    values.config === undefined
      ? undefined
      : await prepareConfig(values.config, (l) => io.stderr(l), stopping);
  // A --config issuer this server would never read refuses the file, as the API refuses it; a
  // tokens file that could not take the tokens refuses it too, before the store is created.
  if (prepared !== undefined) {
    refuseIssuerRefs(prepared.issuers, { dirs });
    await checkTokensFile(prepared);
  }
  stopping.throwIfAborted();
  let app: ReturnType<typeof buildServer> | undefined;
  const opened = await openBaton(choice, {
    ...(stopMatrix !== undefined && { stopMatrix }),
    // A rolling upgrade: a newer Baton migrating the shared store stops this one (exit 1).
    watchSchemaEveryMs: SCHEMA_WATCH_EVERY_MS,
    // One line per burst (a restart drops every idle connection at once); the pool already
    // discarded them, the next request opens new ones.
    onIdleError: (err) =>
      app?.log.warn({ err }, 'PostgreSQL closed idle pooled connections (server restart or network cut?)'),
  });
  const json = values.json === true;
  const minted: CreatedPrincipalToken[] = [];
  let poll: PollLoop | undefined;
  let reconciler: BackgroundReconciler | undefined;
  try {
    const metrics = new Metrics();
    const missions = wireMissionConsumer({
      engine: opened.engine,
      harness: opened.harness,
      clock: systemClock,
      metrics: metrics.missions,
      secretScope: { dirs },
      onError: (error, what) => app?.log.warn({ err: error, what }, 'mission consumer step failed'),
    });
    const reconcileStore = new ReconciliationStore(opened.engine);
    const reconcileMetrics = new ReconcileMetrics(
      () => reconcileStore.oldestUnresolvedEnteredAt(),
      () => systemClock.wallMs(),
    );
    app = buildServer({
      metrics,
      missions,
      reconcileMetrics,
      engine: opened.engine,
      service: opened.service,
      harness: opened.harness,
      signingKey: opened.domainKey.privateKey,
      keys,
      logger: { level, stream: process.stderr },
      console: values['no-console'] !== true,
      secureCookies: values['secure-cookies'] === true,
      allowedHostNames: hostNames,
    });
    // --config: every request waits for it (503 starting) until it is applied, after the listen,
    // so a server that cannot listen has minted no token and rewritten no tokens file.
    const configured =
      prepared === undefined ? undefined : answerStartingUntil(app, 'its --config is being applied');
    const address = await app.listen({ port: wanted, host }).catch((cause: unknown) => {
      throw listenError(cause, host, wanted);
    });
    stopping.throwIfAborted();
    if (prepared !== undefined) await applyAtStart(prepared, opened, io, json ? minted : undefined, address);
    configured?.();
    await describeIssuers(missions, io);
    if (pollMs !== undefined)
      poll = startPollLoop(missions, pollMs, (error) =>
        app?.log.warn({ err: error }, 'SET poll round failed'),
      );
    // After the listen: a server that cannot listen leaves no admin token nobody was shown.
    const adminToken = await firstAdmin(opened);
    const log = app.log;
    if (everyMs !== undefined) {
      reconciler = startServeReconciler({
        engine: opened.engine,
        service: opened.service,
        keys,
        clock: systemClock,
        everyMs,
        concurrency,
        metrics: reconcileMetrics,
        onError: (err, occurrenceId) => log.error({ err, occurrenceId }, 'reconcile failed'),
      });
    }
    const url = `http://${urlHost(host)}:${(app.server.address() as AddressInfo).port}`;
    const consoleUrl = values['no-console'] === true ? null : `${url}/console/`;
    if (json) {
      printJson(io, {
        url,
        store: opened.description,
        adminToken,
        console: consoleUrl,
        configTokens: configTokensJson(minted),
      });
    } else {
      if (adminToken !== null) {
        io.stdout(`initial admin token (shown once; only its digest is stored): ${adminToken}\n`);
      }
      io.stdout(`baton listening on ${url} (${opened.description})\n`);
      if (consoleUrl !== null)
        io.stdout(`console at ${consoleUrl} (sign in with an operator or admin token)\n`);
    }
    return { opened, app, timeoutMs, poll, reconciler };
  } catch (error) {
    // --json: tokens the config minted before the start failed are not lost; they are the one line.
    if (minted.length > 0) printJson(io, { configTokens: configTokensJson(minted) });
    await poll?.stop();
    await reconciler?.stop();
    await app?.close();
    await opened.close();
    throw error;
  }
}

export async function runServe(argv: string[], io: CliIo, stop?: AbortSignal): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  // Listen for the signals before the ready line: a signal that came between the line and the
  // listener would find the default disposition and kill the process mid-start.
  const signals = stopSignals(stop);
  try {
    return await serveUntilStopped(argv, io, signals);
  } finally {
    signals.dispose();
  }
}

async function serveUntilStopped(argv: string[], io: CliIo, signals: StopSignals): Promise<number> {
  let started: Started;
  let cause: StopCause | undefined;
  const stopping = new AbortController();
  void signals.first.then((c) => {
    cause = c;
    stopping.abort();
  });
  try {
    started = await start(argv, io, stopping.signal);
  } catch (error) {
    if (cause === undefined) return reportError(error, io);
    // Stopped while starting: whatever the start was waiting for is beside the point now.
    io.stderr(`baton: ${cause} while starting: stopped before it was ready\n`);
    return SIGNAL_EXIT[cause];
  }
  const { app, opened, timeoutMs, poll, reconciler } = started;
  const first = await Promise.race([signals.first, storeFailure(opened, io)]);
  await poll?.stop();
  io.stderr(`baton: ${first}: draining (at most ${timeoutMs / 1000} s; a second signal cuts it short)\n`);
  let second: StopCause | undefined;
  const again = signals.second.then((cause) => {
    second = cause;
    io.stderr(`baton: ${cause} again: closing the remaining connections now\n`);
  });
  // The background reconciler starts no new ask and lets those in flight answer, while the
  // requests in flight drain; only then is the store closed.
  const [result] = await Promise.all([drain(app, timeoutMs, again), reconciler?.stop()]);
  await opened.close();
  if (second !== undefined) {
    io.stderr('baton: stopped (forced)\n');
    return SIGNAL_EXIT[second];
  }
  if (!result.drained) {
    io.stderr(`baton: stopped: requests still in flight after ${timeoutMs / 1000} s were cut\n`);
    return EXIT.negative;
  }
  if (first === 'store failed') {
    io.stderr('baton: stopped: the store can no longer be used by this server\n');
    return EXIT.negative;
  }
  io.stderr('baton: stopped\n');
  return EXIT.ok;
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Serve the HTTP API over SQLite or PostgreSQL.',
  usage: USAGE,
  run: (argv, io) => runServe(argv, io),
};
