/**
 * Live updates: GET /v1/events (server-sent events on new evidence). An event only says that
 * something changed; the page re-reads what it shows through the API (src/server/events.ts).
 *
 * The stream can end: the server sends a last `end` event naming its refusal when the session
 * no longer authenticates, then closes, and the browser's retry is refused (401); or the server
 * goes away. Either way the page is no longer live, and says so (`useLiveStatus`) instead of
 * counting events that can no longer come (docs/console.md "Live updates").
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, endSession } from './api.js';

/** `connecting` until the stream opens; `reconnecting` while the browser retries; `disconnected` once it gave up. */
export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'disconnected';

const streams = new Map<EventSource, LiveStatus>();
const listeners = new Set<() => void>();

function set(source: EventSource, status: LiveStatus | undefined): void {
  if (status === undefined) streams.delete(source);
  else streams.set(source, status);
  for (const l of listeners) l();
}

/** The worst status of the open streams (undefined: no page listens). */
function overall(): LiveStatus | undefined {
  const all = [...streams.values()];
  for (const s of ['disconnected', 'reconnecting', 'connecting'] as const) if (all.includes(s)) return s;
  return all.length > 0 ? 'live' : undefined;
}

export function useLiveStatus(): LiveStatus | undefined {
  const [status, setStatus] = useState(overall);
  useEffect(() => {
    const on = (): void => setStatus(overall());
    listeners.add(on);
    on();
    return () => void listeners.delete(on);
  }, []);
  return status;
}

/**
 * Asks whether the session still lives: a 401 goes back to sign-in (api.ts's response hook). Any
 * other failure (the server is gone) changes nothing more: the stream already shows disconnected.
 */
function checkSession(): void {
  api.GET('/v1/session').catch((error: unknown) => console.warn('session check failed', error));
}

/** The `end` event's code, or undefined when its data is not the JSON the server sends. */
function endCode(data: string): string | undefined {
  try {
    const parsed = JSON.parse(data) as { code?: unknown };
    return typeof parsed.code === 'string' ? parsed.code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `onEvent` for each new evidence event (of `subject`, when given); `onOpen` each time the stream
 * opens. The page's first read and the stream start apart (both after paint, in parallel): evidence
 * written between the read's snapshot and the stream's start is in neither, so a page re-reads once
 * the stream is open (a reconnect resumes from the last event id, so it misses nothing).
 */
export function useEvidenceEvents(
  onEvent: (subject: string) => void,
  subject?: string,
  onOpen?: () => void,
): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const opened = useRef(onOpen);
  opened.current = onOpen;
  useEffect(() => {
    const q = subject === undefined ? '' : `?subject=${encodeURIComponent(subject)}`;
    const source = new EventSource(`/v1/events${q}`);
    set(source, 'connecting');
    source.addEventListener('open', () => {
      set(source, 'live');
      opened.current?.();
    });
    source.addEventListener('evidence', (e) => {
      const data = JSON.parse((e as MessageEvent<string>).data) as { subject: string };
      handler.current(data.subject);
    });
    // The server refused the stream's credential (docs/console.md "Live updates"): no retry.
    source.addEventListener('end', (e) => {
      source.close();
      set(source, 'disconnected');
      // The server's refusal names its code; anything unreadable is settled by asking the session.
      if (endCode((e as MessageEvent<string>).data) === 'unauthenticated') endSession();
      else checkSession();
    });
    // CLOSED: the browser gave up (a 401, or an answer that is no event stream); else it retries.
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED) {
        set(source, 'disconnected');
        checkSession();
      } else set(source, 'reconnecting');
    });
    return () => {
      source.close();
      set(source, undefined);
    };
  }, [subject]);
}
