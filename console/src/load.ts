/**
 * Load-on-change for a page: the value, the error, and a reload (after an event or an action).
 *
 * The value is kept with the query it answers (`deps`, the key): while the shown answer belongs to
 * another key (a filter or page change whose answer has not come yet) the page gets `loading` and
 * no value, so rows of the old query never stand under the new filter, nor its cursor behind Next.
 *
 * Reloads are throttled (docs/console.md "Live updates"): a burst of evidence events must not make
 * every open console re-read its page once per event. At most one reload per RELOAD_GAP_MS, on the
 * trailing edge, and none while one is in flight (the one asked for meanwhile runs after it).
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  readonly value: T | undefined;
  readonly error: unknown;
  /** The shown value (or error) answers another key: the current one is being read. */
  readonly loading: boolean;
  readonly reload: () => void;
}

export const RELOAD_GAP_MS = 1500;

interface Answer<T> {
  readonly key: string;
  readonly value?: T;
  readonly error?: unknown;
}

interface Gate {
  gen: number;
  inFlight: boolean;
  pending: boolean;
  last: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  alive: boolean;
}

/**
 * `refresh`, when given, is no part of the key: each change asks for a (throttled) reload, for a
 * panel whose parent counts the events it follows.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[], refresh?: number): Loaded<T> {
  const key = JSON.stringify(deps);
  const [answer, setAnswer] = useState<Answer<T>>({ key: '\u0000' });
  const loadRef = useRef(load);
  loadRef.current = load;
  const keyRef = useRef(key);
  keyRef.current = key;
  const gate = useRef<Gate>({
    gen: 0,
    inFlight: false,
    pending: false,
    last: 0,
    timer: undefined,
    alive: true,
  });

  const run = useCallback((): void => {
    const g = gate.current;
    const k = keyRef.current;
    const gen = ++g.gen;
    g.inFlight = true;
    g.pending = false;
    g.last = Date.now();
    const settle = (a: Answer<T>): void => {
      if (!g.alive || gen !== g.gen) return;
      setAnswer(a);
      g.inFlight = false;
      if (g.pending) schedule();
    };
    // A load that throws before its first await (a bad deep link's query) fails like any other.
    // The old value goes with a failed load: rows of another query (or a session that ended)
    // must not stand beside the error as if they answered this one.
    new Promise<T>((resolve) => resolve(loadRef.current())).then(
      (value) => settle({ key: k, value }),
      (error: unknown) => settle({ key: k, error }),
    );
  }, []);

  const schedule = useCallback((): void => {
    const g = gate.current;
    if (!g.alive || g.inFlight || g.timer !== undefined) return;
    g.timer = setTimeout(
      () => {
        g.timer = undefined;
        if (g.pending && !g.inFlight) run();
      },
      Math.max(0, g.last + RELOAD_GAP_MS - Date.now()),
    );
  }, [run]);

  const reload = useCallback((): void => {
    gate.current.pending = true;
    schedule();
  }, [schedule]);

  // A new key is read at once, whatever is in flight: that answer is for a query no longer shown.
  useEffect(() => run(), [key]);
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else reload();
  }, [refresh]);
  useEffect(() => {
    const g = gate.current;
    g.alive = true;
    return () => {
      g.alive = false;
      if (g.timer !== undefined) clearTimeout(g.timer);
    };
  }, []);

  const current = answer.key === key;
  return {
    value: current ? answer.value : undefined,
    error: current ? answer.error : undefined,
    loading: !current,
    reload,
  };
}
