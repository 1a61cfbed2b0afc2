/**
 * Injected time (DESIGN.md §9). Pure functions take `now` as an argument; services take a Clock.
 * `wallMs` is Unix time in milliseconds (for timestamps and deadlines written to records);
 * `monotonicMs` never goes backwards and is for measuring elapsed time and freshness windows
 * inside one process only.
 */
export interface Clock {
  wallMs(): number;
  monotonicMs(): number;
}

export const systemClock: Clock = {
  wallMs: () => Date.now(),
  monotonicMs: () => performance.now(),
};

/** A clock that moves only when told to: for tests and deterministic replays. */
export class ManualClock implements Clock {
  #wall: number;
  #mono = 0;

  constructor(startWallMs: number) {
    this.#wall = startWallMs;
  }

  wallMs(): number {
    return this.#wall;
  }

  monotonicMs(): number {
    return this.#mono;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('a manual clock only moves forward');
    this.#wall += ms;
    this.#mono += ms;
  }

  /** Move the wall clock only (an NTP step); monotonic time is unaffected. */
  setWall(wallMs: number): void {
    this.#wall = wallMs;
  }
}
