/** Load-on-change for a page: the value, the error, and a reload (after an event or an action). */
import { useCallback, useEffect, useState } from 'preact/hooks';

export interface Loaded<T> {
  readonly value: T | undefined;
  readonly error: unknown;
  readonly reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [value, setValue] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    // A load that throws before its first await (a bad deep link's query) fails like any other.
    new Promise<T>((resolve) => resolve(load())).then(
      (v) => live && (setValue(v), setError(undefined)),
      // The old value goes with a failed load: rows of another query (or a session that ended)
      // must not stand beside the error as if they answered this one.
      (e: unknown) => live && (setValue(undefined), setError(e)),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { value, error, reload };
}
