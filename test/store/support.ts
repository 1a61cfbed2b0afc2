import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { CliIo } from '../../src/cli/io.js';
import type { EngineKind } from '../../src/store/engine.js';

/**
 * The statements that remove the evidence log's append-only guard (migrations 031, 036), one by one: what
 * someone with database write access can run before rewriting history, and what a test that plays
 * that attacker runs first. The guard is no proof (docs/store.md, "What it cannot catch").
 */
export const DROP_EVIDENCE_GUARD: Readonly<Record<EngineKind, readonly string[]>> = {
  sqlite: [
    'DROP TRIGGER IF EXISTS evidence_events_no_update',
    'DROP TRIGGER IF EXISTS evidence_events_no_delete',
    'DROP TRIGGER IF EXISTS evidence_events_no_replace',
  ],
  postgres: [
    'DROP TRIGGER IF EXISTS evidence_events_append_only ON evidence_events',
    'DROP TRIGGER IF EXISTS evidence_events_no_truncate ON evidence_events',
    'ALTER TABLE evidence_events DROP CONSTRAINT IF EXISTS evidence_events_seq_positive',
  ],
};

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
