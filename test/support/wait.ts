/**
 * Polling with a deadline, for a server run in this process (`runServe`, `runSor`) or a condition
 * on a live one (issue 10, part 1): the wait fails at the deadline, or as soon as the run it waits
 * on has ended, with what that run wrote on stderr, instead of looping forever.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { READY_DEADLINE_MS } from './child.js';

export interface WaitOptions {
  readonly deadlineMs?: number;
  /** What to quote on failure: the server's stderr, its output so far. */
  readonly detail?: () => string;
  /** The run being waited on: if it settles first, the wait fails at once. */
  readonly running?: Promise<unknown>;
  readonly pollMs?: number;
}

export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  options: WaitOptions = {},
): Promise<void> {
  const { deadlineMs = READY_DEADLINE_MS, detail = () => '', running, pollMs = 10 } = options;
  let ended: string | undefined;
  running?.then(
    (value) => (ended = `it ended (${String(value)})`),
    (error: unknown) => (ended = `it failed (${error instanceof Error ? error.message : String(error)})`),
  );
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (await check()) return;
    const why = ended ?? (Date.now() >= deadline ? `not within ${deadlineMs} ms` : undefined);
    if (why !== undefined)
      throw new Error(`waiting for ${what}: ${why}\n--- detail ---\n${detail() || '(none)'}`);
    await sleep(pollMs);
  }
}
