/**
 * The answer of "Reconcile now" (POST /v1/occurrences/{id}/reconcile) in plain words: what the
 * pass settled, or what it still does not know (the missing-knowledge words of format.tsx), and
 * how many status sources answered how (read, not necessarily recorded: `countsOf`). The API's
 * JSON stays one click away.
 */
import { useEffect, useRef } from 'preact/hooks';
import type { paths } from '../generated/api.js';
import { MISSING_KNOWLEDGE } from '../format.js';

export type Reconciled =
  paths['/v1/occurrences/{id}/reconcile']['post']['responses'][200]['content']['application/json'];

const OUTCOME_WORDS: Readonly<Record<string, string>> = {
  success: 'succeeded',
  not_accepted: 'not accepted',
  final_failure: 'failed (final)',
  accepted: 'accepted, not yet settled',
  unknown: 'unknown',
};

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The one sentence an operator needs first: settled, still unknown and why, or nothing to ask. */
export function verdictOf(r: Reconciled): string {
  const o = r.occurrence;
  const mk = r.missingKnowledge ?? null;
  if (r.report.resolved.includes(o.id)) {
    return `Resolved: an authenticated answer settled it, outcome ${OUTCOME_WORDS[o.outcome] ?? o.outcome}.`;
  }
  if (!o.unresolved) return `Nothing was asked: the occurrence is ${o.phase}, not unresolved.`;
  if (r.report.observations === 0 && (r.report.byReason['error'] ?? 0) === 0) {
    return 'Still unresolved: no status source of its profile applies to this occurrence, so none was asked.';
  }
  if (mk !== null) return `Still unresolved. Missing knowledge (${mk}): ${MISSING_KNOWLEDGE[mk] ?? mk}.`;
  return `Still unresolved: the answer says ${OUTCOME_WORDS[o.outcome] ?? o.outcome}, which does not settle it.`;
}

/**
 * Each counted answer: effective ones, failures to ask, and each missing-knowledge reason.
 * `report.observations` counts readings asked, not events appended: a reading that repeats one
 * already kept is answered but not appended past the occurrence's bound (docs/api.md, reconcile),
 * so the count says "read", never "recorded": the timeline is the record.
 */
function countsOf(r: Reconciled): string[] {
  const lines = [
    `${plural(r.report.observations, 'status answer')} read (asked now), ${r.report.effective} of them effective. The timeline shows the readings kept as evidence: a reading that repeats earlier ones may not be added again.`,
  ];
  for (const [reason, n] of Object.entries(r.report.byReason)) {
    if (reason === 'effective') continue;
    if (reason === 'error') lines.push(`${plural(n, 'status source')} could not be asked.`);
    else lines.push(`${n} × ${reason}: ${MISSING_KNOWLEDGE[reason] ?? 'no description'}.`);
  }
  return lines;
}

export function ReconcileAnswer({ answer }: { answer: Reconciled }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // The button that asked may be gone (a settled occurrence offers no reconcile): focus the answer.
  useEffect(() => heading.current?.focus(), [answer]);
  return (
    <section class="result" aria-labelledby="rec-h">
      <h2 id="rec-h" tabIndex={-1} ref={heading}>
        Reconcile answer
      </h2>
      <p class="verdict">{verdictOf(answer)}</p>
      <ul>
        {countsOf(answer).map((l) => (
          <li>{l}</li>
        ))}
      </ul>
      <details>
        <summary>The API's answer (JSON)</summary>
        <pre>{JSON.stringify(answer, null, 2)}</pre>
      </details>
    </section>
  );
}
