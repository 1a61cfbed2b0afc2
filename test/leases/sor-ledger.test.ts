import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SqliteLeaseLedger } from '../../src/sor/sqlite-ledger.js';

test('the reference system of record ledger runs WAL with synchronous = FULL on every connection', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-sor-ledger-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'sor.db');
  // Two connections to one file, as baton sor and a racing gateway process have (race.test.ts):
  // synchronous is per connection, not stored in the file, so each must set it.
  const first = new SqliteLeaseLedger(path);
  const second = new SqliteLeaseLedger(path);
  try {
    for (const ledger of [first, second])
      assert.deepEqual(ledger.durability(), { journalMode: 'wal', synchronous: 'full' });
  } finally {
    first.close();
    second.close();
  }
});
