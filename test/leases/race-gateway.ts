// One racing gateway's commit as its own OS process with its own SQLite connection (race.test.ts).
// Protocol on stdin: one JSON line (RaceInput), then a line "go"; it answers one JSON line on stdout.
// Not a test file itself.
import { createInterface } from 'node:readline';
import { ManualClock } from '../../src/core/clock.js';
import { importEd25519PrivateKey, importEd25519PublicKey } from '../../src/core/ed25519.js';
import type { JsonValue } from '../../src/core/json.js';
import { LeaseService, keyRing, signingKeyFrom } from '../../src/leases/index.js';
import { inventoryModel } from '../../src/sor/inventory.js';
import { SqliteLeaseLedger } from '../../src/sor/sqlite-ledger.js';

export interface RaceInput {
  dbPath: string;
  target: string;
  lease: string;
  operation: JsonValue;
  inversePayload: JsonValue;
  sorKeyPem: string;
  trustedPems: string[];
  nowMs: number;
}

async function main(): Promise<void> {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const input = JSON.parse(String((await lines.next()).value)) as RaceInput;
  const ledger = new SqliteLeaseLedger(input.dbPath);
  const service = new LeaseService({
    ledger,
    model: inventoryModel,
    clock: new ManualClock(input.nowMs),
    signer: signingKeyFrom(importEd25519PrivateKey({ pem: input.sorKeyPem })),
    trusted: keyRing(input.trustedPems.map((pem) => importEd25519PublicKey({ pem }))),
  });
  process.stdout.write('ready\n');
  await lines.next();
  const answer = service.mutate(input.target, Buffer.from(input.lease), {
    operation: input.operation,
    inversePayload: input.inversePayload,
  });
  ledger.close();
  process.stdout.write(
    `${JSON.stringify({ status: answer.status, code: answer.rejection?.code ?? null })}\n`,
  );
  process.stdin.destroy();
}

await main();
