/**
 * `baton sor [--port N]`: run the reference system of record (src/sor) until SIGINT/SIGTERM.
 */
import { readFile } from 'node:fs/promises';
import type { KeyObject } from 'node:crypto';
import { BatonError } from '../../core/errors.js';
import {
  generateEd25519KeyPair,
  importEd25519PrivateKey,
  importEd25519PublicKey,
} from '../../core/ed25519.js';
import { randomIdSource } from '../../core/ids.js';
import { signingKeyFrom, type SigningKey } from '../../leases/index.js';
import { publicOriginDefect, startSor } from '../../sor/server.js';
import { parseOptions, printJson, reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { startError } from '../listen.js';

const USAGE = `usage: baton sor [--port N] [--host HOST] [--db FILE] [--key PRIVATE.pem] [--trust PUBLIC.pem]...
                 [--operator-token-file FILE] [--public-url URL] [--json]

Runs the reference PTCL system of record (inventory allocations) until interrupted.
  --port N               listen port (default 8787; 0 picks a free one)
  --host HOST            listen address (default 127.0.0.1)
  --db FILE              its SQLite file (default ./baton-sor.db)
  --key PRIVATE.pem      receipt-signing key (default: a fresh key for this run)
  --trust PUBLIC.pem     a gateway key whose leases are honoured (repeatable; none: every lease is refused)
  --operator-token-file  bearer token for escrow approval and the audit log (default: $BATON_SOR_OPERATOR_TOKEN,
                         else a fresh token printed once)
  --public-url URL       canonical origin of sor_target_uri values, scheme://host[:port] only
                         (default http://HOST:PORT); pinned in --db at first start: a later start
                         on another origin is refused
  --json                 print one JSON line when ready instead of the text lines:
                         {"url","receiptKid","freshKey":B,"operatorToken":T|null}
`;

async function pem(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    throw new BatonError('usage', `cannot read ${file}`, { file }, { cause });
  }
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

function options(argv: string[]) {
  return parseOptions({
    args: argv,
    strict: true,
    options: {
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      db: { type: 'string', default: 'baton-sor.db' },
      key: { type: 'string' },
      trust: { type: 'string', multiple: true, default: [] },
      'operator-token-file': { type: 'string' },
      'public-url': { type: 'string' },
      json: { type: 'boolean' },
    },
  }).values;
}

/** `stop` resolves when the server should shut down (tests pass their own; default: a signal). */
export async function runSor(argv: string[], io: CliIo, stop?: Promise<void>): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  try {
    const v = options(argv);
    const port = Number(v.port);
    if (!/^[0-9]{1,5}$/.test(v.port) || port > 65535) throw new BatonError('usage', '--port must be 0-65535');
    const signer: SigningKey = signingKeyFrom(
      v.key !== undefined
        ? importEd25519PrivateKey({ pem: await pem(v.key) })
        : generateEd25519KeyPair().privateKey,
    );
    const trusted: KeyObject[] = [];
    for (const file of v.trust) trusted.push(importEd25519PublicKey({ pem: await pem(file) }));
    const fromFile =
      v['operator-token-file'] !== undefined ? (await pem(v['operator-token-file'])).trim() : undefined;
    const token = fromFile ?? process.env['BATON_SOR_OPERATOR_TOKEN'] ?? randomIdSource.secret();
    if (token.length < 16) throw new BatonError('usage', 'the operator token must be at least 16 characters');
    const publicOrigin = v['public-url'];
    const originDefect = publicOrigin === undefined ? undefined : publicOriginDefect(publicOrigin);
    if (originDefect !== undefined) throw new BatonError('usage', `--public-url ${originDefect}`);
    const sor = await startSor({
      dbPath: v.db,
      signer,
      trusted,
      operatorToken: token,
      port,
      host: v.host,
      ...(publicOrigin !== undefined ? { publicOrigin } : {}),
    }).catch((cause: unknown) => {
      throw startError(cause, v.host, port);
    });
    const shown = fromFile === undefined && process.env['BATON_SOR_OPERATOR_TOKEN'] === undefined;
    if (v.json === true) {
      const operatorToken = shown ? token : null;
      printJson(io, { url: sor.url, receiptKid: signer.kid, freshKey: v.key === undefined, operatorToken });
    } else {
      io.stdout(
        `sor listening on ${sor.url}\nreceipt key ${signer.kid}${v.key === undefined ? ' (fresh for this run)' : ''}\n`,
      );
      if (shown) io.stdout(`operator token (shown once): ${token}\n`);
    }
    if (trusted.length === 0) io.stderr('warning: no --trust keys: every lease will be refused\n');
    await (stop ?? untilSignal());
    await sor.close();
    return EXIT.ok;
  } catch (error) {
    return reportError(error, io);
  }
}

export const sorCommand: Command = {
  name: 'sor',
  summary: 'Run the reference PTCL system of record (inventory allocations).',
  usage: USAGE,
  run: (argv, io) => runSor(argv, io),
};
