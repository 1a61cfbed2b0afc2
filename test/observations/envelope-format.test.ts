/**
 * OBS-07, OBS-12 ¶25, C-B10: the one evidence envelope format of the binding is `jws-compact`.
 * A record naming any other format is refused by the reader's enum pass — so `baton observe
 * validate` refuses it as `observe verify` does, instead of saying "valid" — and `validate` says
 * plainly that it does not check a signature (pointing to `observe verify`).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { observeCommand } from '../../src/cli/commands/observe.js';
import { isBatonError } from '../../src/core/errors.js';
import { readRecordValue } from '../../src/observations/index.js';
import { captureIo, tempDir } from '../store/support.js';
import { example } from './support.js';

async function run(argv: string[]) {
  const io = captureIo();
  const code = await observeCommand.run(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

test('C-B10: an evidence_envelope of a format other than jws-compact is refused (rule enum)', () => {
  for (const format of ['none', 'JWS-COMPACT', 'jws-json', 'jwt']) {
    assert.throws(
      () => readRecordValue({ ...example(), evidence_envelope: { format, value: 'not-a-jws' } }),
      (err: unknown) =>
        isBatonError(err, 'observation_record_invalid') &&
        err.details['rule'] === 'enum' &&
        err.details['path'] === '$.evidence_envelope.format',
      format,
    );
  }
});

test('CLI: observe validate refuses an unknown envelope format (exit 1) and says it checks no signature', async (t) => {
  const dir = tempDir(t);
  const none = join(dir, 'none.json');
  writeFileSync(
    none,
    JSON.stringify({ ...example(), evidence_envelope: { format: 'none', value: 'not-a-jws' } }),
  );
  const refused = await run(['validate', none]);
  assert.equal(refused.code, 1, refused.out);
  assert.match(refused.err, /observation_record_invalid \[enum at \$\.evidence_envelope\.format\]/);
  // A jws-compact envelope passes the reader, but validate never checks it: it says so.
  const signedShape = join(dir, 'jws.json');
  writeFileSync(
    signedShape,
    JSON.stringify({ ...example(), evidence_envelope: { format: 'jws-compact', value: 'not-a-jws' } }),
  );
  const read = await run(['validate', signedShape]);
  assert.equal(read.code, 0, read.err);
  assert.match(
    read.out,
    /^signature not checked: validate reads the record only; use `baton observe verify`/m,
  );
});
