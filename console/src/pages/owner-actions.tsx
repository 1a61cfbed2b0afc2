/**
 * Release and remedy on the occurrence page, shown as unavailable to operators, with why in plain
 * words and the call the owner would make (issue 14 §3 "actions by role"; docs/console.md). The
 * draft gives neither an operator path: a release MUST authenticate the reservation owner
 * (AOC-REQ-008), and a remedy is a new occurrence that needs its own authority and authorization
 * (AOC-REQ-012) — both are the executor's, under the lineage's current generation.
 */
import type { Occurrence } from './occurrences.js';

function releaseWhy(o: Occurrence): string {
  if (o.phase !== 'reserved') {
    return `Nobody can release it now: only a reservation that was never entered can be released, and this occurrence is ${o.phase}.`;
  }
  return `Only the reservation's owner can release it: the executor of lineage ${o.lineage} with its current credential. The draft requires the release to authenticate that owner (AOC-REQ-008), so an operator's session cannot do it.`;
}

function remedyWhy(o: Occurrence): string {
  const base = `A remedy (compensation, refund or replacement) is a new occurrence with its own authority budget and authorization (AOC-REQ-012), created by the executor of lineage ${o.lineage}.`;
  return o.phase === 'entered' || o.phase === 'resolved'
    ? base
    : `${base} It applies to an entered occurrence; this one is ${o.phase}.`;
}

export function OwnerActions({ o }: { o: Occurrence }) {
  const release = `// the executor of ${o.lineage} (SDK, docs/client.md)
await executor.release('${o.id}', '${o.provider.requestDigest}');
// or: POST /v1/occurrences/${o.id}/release with its credential
//     {"requestDigest": "${o.provider.requestDigest}"}`;
  const remedy = `await executor.remedy({ remedyOf: '${o.id}', kind: 'refund',
  creationKey: '…', provider: { … }, request: { … }, authority: { id: '…', amount: … } });
// or: POST /v1/occurrences/${o.id}/remedies with its credential`;
  return (
    <>
      <section class="unavailable" aria-labelledby="release-h">
        <h2 id="release-h">Release the reservation — not available here</h2>
        <p>{releaseWhy(o)}</p>
        {o.phase === 'reserved' && <pre>{release}</pre>}
      </section>
      <section class="unavailable" aria-labelledby="remedy-h">
        <h2 id="remedy-h">Create a remedy — not available here</h2>
        <p>{remedyWhy(o)}</p>
        <pre>{remedy}</pre>
      </section>
    </>
  );
}
