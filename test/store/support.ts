import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { CliIo } from '../../src/cli/io.js';

/** A fresh temporary directory, removed when the test ends. */
export function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface CapturedIo extends CliIo {
  readonly out: string[];
  readonly err: string[];
}

export function captureIo(): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (s) => void out.push(s),
    stderr: (s) => void err.push(s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
}

/** A promise plus the function that settles it: lets a test hold a transaction open. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}
