/**
 * One occurrence: the timeline of every evidence event (time, actor, generation, body) with the
 * chain walk's verdict per event, the provider binding and native key, missing knowledge in plain
 * words, linked occurrences as links, the lineage's handovers, and "reconcile now" (operators and
 * admins, only while the occurrence is unresolved: the API asks nothing otherwise; the answer in
 * words, reconcile-answer.tsx, and its evidence). Release and remedies belong to the reservation's
 * executor (AOC-REQ-008, -012), so the console shows them as unavailable, with the reason and the
 * SDK / HTTP call the owner would make, instead of a button (owner-actions.tsx).
 */
import { useState } from 'preact/hooks';
import { api, ok } from '../api.js';
import { ConfirmStep } from '../confirm.js';
import { useEvidenceEvents } from '../events.js';
import { ErrorNote, MISSING_KNOWLEDGE, Time } from '../format.js';
import { useLoad } from '../load.js';
import { href } from '../router.js';
import { StateBadge } from './occurrences.js';
import { OwnerActions } from './owner-actions.js';
import { ReconcileAnswer, type Reconciled } from './reconcile-answer.js';

interface EvidenceEvent {
  readonly seq: number;
  readonly type: string;
  readonly body?: unknown;
  readonly at: number;
  readonly actor: string;
  readonly hash: string;
}

function generationOf(e: EvidenceEvent): string {
  const b = e.body as Record<string, unknown> | null | undefined;
  const g = b?.['generation'] ?? b?.['capturedGeneration'] ?? b?.['enteredGeneration'];
  const m = /#(\d+)$/.exec(e.actor);
  return typeof g === 'number' ? String(g) : (m?.[1] ?? '—');
}

function reasonsOf(body: unknown): string[] {
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'missingKnowledge' || k === 'reason' || k === 'reasons') {
          for (const r of [x].flat()) if (typeof r === 'string' && r in MISSING_KNOWLEDGE) found.add(r);
        }
        walk(x);
      }
    }
  };
  walk(body);
  return [...found];
}

function Timeline({ events, verified }: { events: readonly EvidenceEvent[]; verified: ReadonlySet<number> }) {
  return (
    <ol class="timeline">
      {events.map((e) => (
        <li>
          <div class="event-head">
            <strong>{e.type}</strong> <Time ms={e.at} /> · {e.actor} · generation {generationOf(e)} ·{' '}
            {verified.has(e.seq) ? (
              <span class="badge good">chain verified</span>
            ) : (
              <span class="badge bad">chain broken</span>
            )}
          </div>
          {reasonsOf(e.body).map((r) => (
            <p class="reason">
              Missing knowledge ({r}): {MISSING_KNOWLEDGE[r]}
            </p>
          ))}
          <details>
            <summary>Body (seq {e.seq})</summary>
            <pre>{JSON.stringify(e.body, null, 2)}</pre>
          </details>
        </li>
      ))}
    </ol>
  );
}

/** The effect in words: the API's `unresolved` effect of a reserved occurrence means none yet. */
const EFFECT_WORDS: Readonly<Record<string, string>> = {
  occurred: 'occurred',
  none_confirmed: 'none (confirmed)',
  unresolved: 'not established',
};

/** The API's `unresolved` flag (entered, or conflicting: isUnresolved), said with its reason. */
function unresolvedWords(o: { unresolved: boolean; conflict: boolean; phase: string }): string {
  if (!o.unresolved) return `no (${o.phase})`;
  return o.conflict ? 'yes: authenticated answers conflict' : 'yes: entered, its outcome not settled';
}

export function OccurrencePage({ id }: { id: string }) {
  const detail = useLoad(
    async () => ok(await api.GET('/v1/occurrences/{id}', { params: { path: { id } } })),
    [id],
  );
  useEvidenceEvents(detail.reload, `occurrence:${id}`, detail.reload);
  const [result, setResult] = useState<Reconciled>();
  const [error, setError] = useState<unknown>();
  const reconcile = async (): Promise<void> => {
    try {
      setResult(ok(await api.POST('/v1/occurrences/{id}/reconcile', { params: { path: { id } }, body: {} })));
      setError(undefined);
      detail.reload();
    } catch (e) {
      setError(e);
    }
  };
  const d = detail.value;
  if (d === undefined) return <ErrorNote error={detail.error} />;
  const o = d.occurrence;
  const verified = new Set(d.chains.occurrence.verified);
  const links: [string, string | null][] = [
    ['Remedy of', o.remedyOf],
    ['Re-issue of', o.reissueOf],
  ];
  return (
    <section aria-labelledby="o-h">
      <h1 id="o-h">
        Occurrence {o.id} <StateBadge o={o} />
      </h1>
      <dl class="facts">
        <dt>Lineage</dt>
        <dd>
          <a href={href('lineages', o.lineage)}>{o.lineage}</a> (captured generation {o.capturedGeneration})
        </dd>
        <dt>Phase / outcome / effect</dt>
        <dd>
          {o.phase} / {o.outcome} / {EFFECT_WORDS[o.effect] ?? o.effect}
        </dd>
        <dt>Unresolved</dt>
        <dd>{unresolvedWords(o)}</dd>
        <dt>Provider binding</dt>
        <dd>
          {o.provider.profileId}@{o.provider.profileVersion} · {o.provider.account} · {o.provider.environment}
        </dd>
        <dt>Native key</dt>
        <dd>
          <code>{o.provider.nativeKey ?? '—'}</code> ({o.provider.nativeKeyRule})
        </dd>
        <dt>Provider reference</dt>
        <dd>{o.provider.providerReference ?? '—'}</dd>
        <dt>Creation key</dt>
        <dd>{o.creationBinding.key}</dd>
        <dt>Authority</dt>
        <dd>
          {o.authority.amount} {o.authority.unit} of {o.authority.id}
        </dd>
        <dt>Created / entered / resolved</dt>
        <dd>
          <Time ms={o.createdAt} /> / <Time ms={o.enteredAt} /> / <Time ms={o.resolvedAt} />
        </dd>
        {links
          .filter(([, v]) => v !== null)
          .map(([label, v]) => (
            <>
              <dt>{label}</dt>
              <dd>
                <a href={href('occurrences', v ?? '')}>{v}</a>
              </dd>
            </>
          ))}
        {o.linkedIds.map((l) => (
          <>
            <dt>{l.type}</dt>
            <dd>{l.value}</dd>
          </>
        ))}
      </dl>
      <div class="actions">
        {o.unresolved ? (
          <ConfirmStep
            label="Reconcile now"
            id="reconcile"
            question={`Ask the pinned status sources about ${o.id} now?`}
            confirm="Confirm reconcile"
            busyLabel="Reconciling…"
            onConfirm={reconcile}
          />
        ) : (
          <p class="muted">
            Reconcile is offered only while an occurrence is unresolved (entered and not settled, or
            conflicting); this one is {o.phase}, so there is nothing to ask its status sources.
          </p>
        )}
        <OwnerActions o={o} />
      </div>
      <ErrorNote error={error} />
      {result !== undefined && <ReconcileAnswer answer={result} />}
      <h2>
        Evidence ({d.evidence.length} events, chain {d.chains.occurrence.ok ? 'verified' : 'BROKEN'})
      </h2>
      <Timeline events={d.evidence} verified={verified} />
      <h2>
        Handovers of the lineage ({d.handovers.length}, {d.chains.lineage.ok ? 'verified' : 'BROKEN'})
      </h2>
      <p>
        Each handover is checked with its links to the events on either side and the lineage chain's end
        against its recorded head; the verification page walks the whole chain.
      </p>
      <Timeline events={d.handovers} verified={new Set(d.chains.lineage.verified)} />
    </section>
  );
}
