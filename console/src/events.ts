/**
 * Live updates: GET /v1/events (server-sent events on new evidence). An event only says that
 * something changed; the page re-reads what it shows through the API (src/server/events.ts).
 */
import { useEffect, useRef } from 'preact/hooks';

export function useEvidenceEvents(onEvent: (subject: string) => void, subject?: string): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    const q = subject === undefined ? '' : `?subject=${encodeURIComponent(subject)}`;
    const source = new EventSource(`/v1/events${q}`);
    source.addEventListener('evidence', (e) => {
      const data = JSON.parse((e as MessageEvent<string>).data) as { subject: string };
      handler.current(data.subject);
    });
    return () => source.close();
  }, [subject]);
}
