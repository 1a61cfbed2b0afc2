/** The demo's closing facts: per invoice, its occurrence, its state and the sandbox's effect count. */
import type { SandboxProvider } from '../../providers/index.js';
import type { OccurrencesOnSqlite } from '../../store/index.js';
import { occurrencesUnitOfWork } from '../../store/index.js';
import { LINEAGE } from './shared.js';

export interface InvoiceFacts {
  readonly invoice: string;
  readonly occurrenceId: string;
  readonly state: string;
  readonly unresolved: boolean;
  readonly effects: number;
}

/** Every occurrence of the demo's lineage by creation key (= invoice), with the provider's count. */
export async function effectsByInvoice(
  opened: OccurrencesOnSqlite,
  sandbox: SandboxProvider,
): Promise<InvoiceFacts[]> {
  const rows = await occurrencesUnitOfWork(opened.engine).read((repo) =>
    repo.listOccurrences({ lineage: LINEAGE }),
  );
  return rows
    .map((o) => ({
      invoice: o.creationBinding.key,
      occurrenceId: o.id,
      state: `${o.phase}/${o.outcome}`,
      unresolved: o.phase === 'entered' || o.conflict,
      effects: o.provider.nativeKey === null ? 0 : sandbox.effectCount(o.provider.nativeKey),
    }))
    .sort((a, b) => a.invoice.localeCompare(b.invoice));
}

export function printSummary(
  facts: readonly InvoiceFacts[],
  reason: string | null,
  ok: boolean,
  print: (line: string) => void,
): void {
  print('— the sandbox’s effect counter, per invoice —');
  for (const f of facts) {
    print(
      `effects ${f.invoice}: ${f.effects}   (${f.occurrenceId}, ${f.unresolved ? 'UNRESOLVED' : f.state})`,
    );
  }
  const stuck = facts.find((f) => f.invoice === 'invoice-5');
  if (stuck?.unresolved)
    print(`invoice-5 stays unresolved: ${reason ?? 'no reason recorded'} — Baton will not pay it again`);
  print(
    ok
      ? 'demo facts hold: exactly one effect per invoice, the unsigned case unresolved'
      : 'demo facts DO NOT hold',
  );
}
