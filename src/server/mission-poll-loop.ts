/**
 * `baton serve --missions-poll-every D` (A2.5 RFC 8936, A3.5): one poll round over every pinned
 * poll stream, then a pause of D, until stopped. Rounds never overlap (the next is scheduled when
 * the last ended), a failing stream is recorded on its registry row and logged, never fatal, and
 * `stop()` waits for a round in progress so a drain closes the store after it. Each round reads
 * the pinned set again (`pollAll`), so an issuer unpinned by any server sharing the store is not
 * polled from the next round on (docs/missions.md "Unpinning an issuer").
 */
import type { MissionConsumer } from './mission-consumer.js';

export interface PollLoop {
  stop(): Promise<void>;
}

export function startPollLoop(
  consumer: MissionConsumer,
  everyMs: number,
  onError: (error: unknown) => void,
): PollLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const round = (): void => {
    running = consumer
      .pollAll()
      .then(() => undefined, onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(round, everyMs);
      });
  };
  round();
  return {
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}

/** `500ms`, `30s`, `2m`: 100 ms ≤ D ≤ 1 h; undefined for a malformed or out-of-range value. */
export function parsePollInterval(text: string): number | undefined {
  const m = /^([0-9]{1,7})(ms|s|m)$/.exec(text);
  if (m === null) return undefined;
  const ms = Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 's' ? 1000 : 60_000);
  return ms >= 100 && ms <= 3_600_000 ? ms : undefined;
}
