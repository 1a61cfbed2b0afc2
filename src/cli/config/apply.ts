/**
 * Apply a config file to a target (docs/config.md): read and check the file, load and pin its
 * profiles, plan against what the target holds (refusing conflicts before the first write), run
 * the writes, and hand back what changed and the tokens minted (written to the tokens file when
 * one is named, else returned to be printed once).
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { BatonError } from '../../core/errors.js';
import type { CreatedPrincipalToken } from '../../client/index.js';
import { parseConfig } from './read.js';
import { execute, plan, type PlannedItem } from './plan.js';
import { loadProfiles } from './profiles.js';
import { loadIssuers } from './issuers.js';
import type { SetupTarget } from './target.js';
import { readTokensFile, writeTokensFile } from './tokens-file.js';

export interface ApplyOptions {
  /** Overrides the config's `tokens.file` (relative to the working folder). */
  readonly tokensFile?: string;
}

export interface ApplyOutcome {
  readonly items: readonly PlannedItem[];
  readonly changed: boolean;
  /** Where minted tokens were written, if a tokens file was named. */
  readonly tokensFile?: string;
  /** Tokens to print once (only when no tokens file was named). */
  readonly printOnce: readonly CreatedPrincipalToken[];
}

export async function readConfigFile(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (cause) {
    throw new BatonError('usage', `cannot read the config file ${file}`, {}, { cause });
  }
}

export async function applyConfig(
  file: string,
  target: SetupTarget,
  options: ApplyOptions = {},
): Promise<ApplyOutcome> {
  const config = parseConfig(await readConfigFile(file));
  const baseDir = dirname(resolve(file));
  const named =
    options.tokensFile ??
    (config.tokens.file &&
      (isAbsolute(config.tokens.file) ? config.tokens.file : resolve(baseDir, config.tokens.file)));
  const profiles = await loadProfiles(config.profiles, baseDir);
  const issuers = await loadIssuers(config.issuers, baseDir);
  const p = await plan(target, config, profiles, issuers);
  const previous =
    named !== undefined && p.items.some((i) => i.kind === 'token' && i.action === 'create')
      ? await readTokensFile(named)
      : [];
  const minted = await execute(p);
  const changed = p.items.some((i) => i.action !== 'unchanged');
  if (named === undefined || minted.length === 0)
    return { items: p.items, changed, printOnce: minted, ...(named !== undefined && { tokensFile: named }) };
  await writeTokensFile(named, previous, minted);
  return { items: p.items, changed, tokensFile: named, printOnce: [] };
}

const DONE: Readonly<Record<PlannedItem['action'], string>> = {
  create: 'created',
  update: 'updated',
  unchanged: 'unchanged',
};

/** One line per item, then either the change count or "unchanged". */
export function describeOutcome(o: ApplyOutcome): string {
  const lines = o.items.map((i) => `${i.kind} ${i.id}: ${DONE[i.action]}`);
  const n = o.items.filter((i) => i.action !== 'unchanged').length;
  lines.push(o.changed ? `applied: ${n} change${n === 1 ? '' : 's'}` : 'unchanged: nothing to apply');
  if (o.tokensFile !== undefined && o.items.some((i) => i.kind === 'token' && i.action === 'create'))
    lines.push(`tokens written to ${o.tokensFile} (mode 0600)`);
  return `${lines.join('\n')}\n`;
}

/** The minted tokens that had no tokens file, one line each: shown this once, never again. */
export function describePrintOnce(o: ApplyOutcome): string {
  return o.printOnce.map((t) => `token ${t.name} (${t.role}, shown once): ${t.token}\n`).join('');
}
