/**
 * Applying a format 2 read rule (docs/providers.md "Read rules") to one provider answer: RFC 6901
 * pointers to the status, the reference, the native key, the amount, the unit and the account.
 * Strict and defensive, as wire.ts is for the sandbox: a member of the wrong type makes the answer
 * malformed (missing knowledge), never a weaker match; nothing is guessed.
 */
import { resolveJsonPointer } from '../../core/json-pointer.js';
import type { JsonValue } from '../../core/json.js';
import { isRfc3339DateTime, parseRfc3339 } from '../../core/time.js';
import type { AnswerRead, ObservationInput } from '../../occurrences/index.js';

export type Carried = ObservationInput['carried'];

export interface ReadFacts {
  readonly nativeStatus: string;
  readonly carried: Carried;
  readonly observedAt: number | undefined;
  readonly eventId: string | undefined;
}

export type ReadOutcome =
  { readonly ok: true; readonly facts: ReadFacts } | { readonly ok: false; readonly why: string };

const BAD = Symbol('bad');
const STATUS = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;

const text = (v: JsonValue | undefined): string | undefined =>
  typeof v === 'string' && v.length > 0 && v.length <= 512 ? v : undefined;

function time(doc: JsonValue, rule: AnswerRead['observedAt']): number | undefined | typeof BAD {
  if (rule === undefined) return undefined;
  const v = resolveJsonPointer(doc, rule.pointer);
  if (rule.format === 'unix-seconds') {
    return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v * 1000 : BAD;
  }
  return typeof v === 'string' && isRfc3339DateTime(v) ? parseRfc3339(v) : BAD;
}

/** A member that may be absent (or null); present, it must be a short string. */
function optionalText(doc: JsonValue, pointer: string | undefined): string | undefined | typeof BAD {
  if (pointer === undefined) return undefined;
  const v = resolveJsonPointer(doc, pointer);
  if (v === undefined || v === null) return undefined;
  return text(v) ?? BAD;
}

/**
 * Read one answer. `pinnedAccount` is the account whose credential or secret authenticated it:
 * used only when the rule says an answer naming no account is about that one.
 */
export function applyRead(rule: AnswerRead, doc: JsonValue, pinnedAccount: string): ReadOutcome {
  for (const e of rule.expect ?? []) {
    if (resolveJsonPointer(doc, e.pointer) !== e.equals)
      return { ok: false, why: `${e.pointer} is not ${String(e.equals)}` };
  }
  const status = resolveJsonPointer(doc, rule.status);
  if (typeof status !== 'string') return { ok: false, why: 'no status' };
  const reference = text(resolveJsonPointer(doc, rule.reference));
  if (reference === undefined) return { ok: false, why: 'no reference' };
  const nativeKey = optionalText(doc, rule.nativeKey);
  const unit = optionalText(doc, rule.unit);
  const eventId = optionalText(doc, rule.eventId);
  const named = optionalText(doc, rule.account.pointer);
  const at = time(doc, rule.observedAt);
  if (nativeKey === BAD || unit === BAD || eventId === BAD || named === BAD || at === BAD) {
    return { ok: false, why: 'a member has the wrong type' };
  }
  let amount: number | undefined;
  if (rule.amount !== undefined) {
    const v = resolveJsonPointer(doc, rule.amount);
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      return { ok: false, why: 'no whole amount' };
    amount = v;
  }
  const account = named ?? (rule.account.whenAbsent === 'pinned' ? pinnedAccount : undefined);
  const carried: Carried = {
    providerReference: reference,
    ...(account !== undefined && { account }),
    ...(nativeKey !== undefined && { nativeKey }),
    ...(amount !== undefined && { amount }),
    ...(unit !== undefined && { unit }),
  };
  return {
    ok: true,
    facts: {
      nativeStatus: STATUS.test(status) ? status : '_unreadable',
      carried,
      observedAt: at,
      eventId,
    },
  };
}
