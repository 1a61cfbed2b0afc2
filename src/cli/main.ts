#!/usr/bin/env node
// The `baton` executable: all logic is in baton.ts so tests can drive it in-process.
import { main } from './baton.js';
import { EXIT, processIo } from './io.js';

main(process.argv.slice(2), processIo).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `error: internal: ${error instanceof Error ? (error.stack ?? error.message) : 'unknown failure'}\n`,
    );
    process.exitCode = EXIT.negative;
  },
);
