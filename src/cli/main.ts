#!/usr/bin/env node
// The `baton` executable: all logic is in baton.ts so tests can drive it in-process.
import { main } from './baton.js';
import { redactSecrets } from './command.js';
import { EXIT, guardStdout, processIo } from './io.js';

guardStdout();

main(process.argv.slice(2), processIo).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const text = error instanceof Error ? (error.stack ?? error.message) : 'unknown failure';
    process.stderr.write(`error: internal: ${redactSecrets(text)}\n`);
    process.exitCode = EXIT.negative;
  },
);
