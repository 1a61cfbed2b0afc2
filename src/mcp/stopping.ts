/**
 * The gateway's stop (review item 4): once stopping, no new consequential call starts and no new
 * session takes the lineage over; the calls already running are waited for — each bounded by the
 * upstream timeout, then recorded at Baton — before the upstreams and Baton's client are closed.
 * Cut short, a call's upstream answer would be lost after entry and left for an operator though
 * the upstream may have answered a moment later (AOC-REQ-005, -010).
 */
export class Running {
  #stopping = false;
  readonly #calls = new Set<Promise<unknown>>();

  get stopping(): boolean {
    return this.#stopping;
  }

  /** Count `call` among the running until it settles. */
  track<T>(call: Promise<T>): Promise<T> {
    this.#calls.add(call);
    const done = (): void => void this.#calls.delete(call);
    call.then(done, done);
    return call;
  }

  /** Stop taking new calls; wait up to `waitMs` for the running ones; how many are still running. */
  async drain(waitMs: number): Promise<number> {
    this.#stopping = true;
    if (this.#calls.size === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([Promise.allSettled([...this.#calls]), deadline]);
    clearTimeout(timer);
    return this.#calls.size;
  }
}
