/** Evidence verification: re-walk every chain (GET /v1/evidence/verify) and show the first break. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api.js';
import { ErrorNote } from '../format.js';
import { href } from '../router.js';

type Report = Awaited<ReturnType<typeof run>>;

async function run() {
  return ok(await api.GET('/v1/evidence/verify'));
}

export function VerifyPage() {
  const [report, setReport] = useState<Report>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const go = async (): Promise<void> => {
    setBusy(true);
    try {
      setReport(await run());
      setError(undefined);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const broken = report?.firstBroken;
  const occurrence = broken?.subject?.startsWith('occurrence:')
    ? broken.subject.slice('occurrence:'.length)
    : undefined;
  return (
    <section aria-labelledby="v-h">
      <h1 id="v-h">Evidence verification</h1>
      <p>
        Re-walks every chain of the evidence log, as <code>baton log verify</code> does.
      </p>
      <button type="button" onClick={() => void go()} disabled={busy}>
        Run verification
      </button>
      <ErrorNote error={error} />
      {report !== undefined && (
        <div aria-live="polite" class={report.ok ? 'verdict good' : 'verdict bad'}>
          <p>
            {report.ok ? 'Every chain verifies' : 'BROKEN'}: {report.events} events in {report.subjects}{' '}
            chains, {report.problems} problem{report.problems === 1 ? '' : 's'}.
          </p>
          {broken !== undefined && (
            <p>
              First broken link: seq {broken.seq} of{' '}
              {occurrence !== undefined ? (
                <a href={href('occurrences', occurrence)}>{broken.subject}</a>
              ) : (
                broken.subject
              )}{' '}
              — {broken.reason}
            </p>
          )}
        </div>
      )}
    </section>
  );
}
