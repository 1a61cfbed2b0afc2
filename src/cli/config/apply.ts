/**
 * Apply a config file to a target (docs/config.md): read and check the file, load and pin its
 * profiles (`prepareConfig`: no target needed, so `serve --config` does it before opening the
 * store), plan against what the target holds (refusing conflicts before the first write), run
 * the writes, and hand back what changed and the tokens minted (written to the tokens file when
 * one is named, else handed to the caller to show once).
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import { BatonError, isBatonError } from '../../core/errors.js';
import { fileReason } from '../output-files.js';
import type { CreatedPrincipalToken } from '../../client/index.js';
import { parseConfig } from './read.js';
import { execute, plan, type PlannedItem } from './plan.js';
import { loadProfiles, type LoadedProfile } from './profiles.js';
import { loadIssuers, type LoadedIssuer } from './issuers.js';
import { loadProducers, type LoadedProducer } from './producers.js';
import type { BatonConfig } from './model.js';
import type { Progress } from './pin.js';
import type { SetupTarget } from './target.js';
import { readTokensFile, writeTokensFile } from './tokens-file.js';
import { inputFileWhy, readInputFile } from './input-file.js';

export interface ApplyOptions {
  /** Overrides the config's `tokens.file` (relative to the working folder). */
  readonly tokensFile?: string;
  /** Where progress lines go (waiting for a sandbox that is still starting). */
  readonly progress?: Progress;
  /** The server applied to, recorded in each tokens file entry (`server`): an origin, no secret. */
  readonly server?: string;
}

/**
 * Where a minted token goes when there is no tokens file (or the file could not take it): handed
 * over as soon as it is minted, so a later failure of the apply cannot lose it; the caller shows
 * it once (`printOnceLine`, or `serve --json`'s ready line).
 */
export type ShowToken = (token: CreatedPrincipalToken) => void;

/**
 * A config file read, checked and loaded (its profiles pinned, its issuers read, its producers'
 * key files read): ready to apply.
 */
export interface PreparedConfig {
  readonly config: BatonConfig;
  /** The config file's folder: `tokens.file` is relative to it. */
  readonly baseDir: string;
  readonly profiles: readonly LoadedProfile[];
  readonly issuers: readonly LoadedIssuer[];
  readonly producers: readonly LoadedProducer[];
}

export interface ApplyOutcome {
  readonly items: readonly PlannedItem[];
  readonly changed: boolean;
  /** Where minted tokens were written, if a tokens file was named. */
  readonly tokensFile?: string;
}

export async function readConfigFile(file: string): Promise<Buffer> {
  try {
    return await readInputFile(file);
  } catch (cause) {
    throw new BatonError('usage', `cannot read the config file ${file}${inputFileWhy(cause)}`, {}, { cause });
  }
}

/**
 * Everything of an apply that needs no target: read and check the file, load (and pin) its
 * profiles, read its issuers and its producers' key files. Every `config_invalid` (and an
 * unreachable sandbox) surfaces here.
 */
export async function prepareConfig(
  file: string,
  progress?: Progress,
  stopping?: AbortSignal,
): Promise<PreparedConfig> {
  const config = parseConfig(await readConfigFile(file), file);
  const baseDir = dirname(resolve(file));
  const profiles = await loadProfiles(config.profiles, baseDir, progress, stopping);
  const issuers = await loadIssuers(config.issuers, baseDir);
  const producers = await loadProducers(config.producers, baseDir);
  return { config, baseDir, profiles, issuers, producers };
}

/** The tokens file the config names (relative to the config's folder), or `override`. */
function tokensFileOf(prepared: PreparedConfig, override?: string): string | undefined {
  const named = prepared.config.tokens.file;
  if (override !== undefined) return override;
  if (named === undefined || named === '') return undefined;
  return isAbsolute(named) ? named : resolve(prepared.baseDir, named);
}

/**
 * Refuse, before anything is written (`serve --config` opens the store after this), a tokens file
 * an apply could not use: not a baton.tokens/1 file, a leftover `.partial`, no folder. Whether the
 * folder can be written is not asked: a restart with nothing to mint never writes it (a tokens file
 * mounted read-only after the first run), and a token the file cannot take is shown instead.
 */
export async function checkTokensFile(prepared: PreparedConfig): Promise<void> {
  const file = tokensFileOf(prepared);
  if (file !== undefined) await readTokensFile(file);
}

export async function applyConfig(
  file: string,
  target: SetupTarget,
  showToken: ShowToken,
  options: ApplyOptions = {},
): Promise<ApplyOutcome> {
  return applyPrepared(await prepareConfig(file, options.progress), target, showToken, options);
}

export async function applyPrepared(
  prepared: PreparedConfig,
  target: SetupTarget,
  showToken: ShowToken,
  options: ApplyOptions = {},
): Promise<ApplyOutcome> {
  const { config, profiles, issuers, producers } = prepared;
  const named = tokensFileOf(prepared, options.tokensFile);
  const p = await plan(target, config, profiles, issuers, producers);
  const previous =
    named !== undefined && p.items.some((i) => i.kind === 'token' && i.action === 'create')
      ? await readTokensFile(named)
      : [];
  const here = {
    server: options.server,
    revoked: new Set(p.tokens.filter((t) => t.revokedAt !== null).map((t) => t.id)),
  };
  const minted: CreatedPrincipalToken[] = [];
  let saved = 0; // how many of `minted` the tokens file holds
  // Each secret is kept (the file rewritten, or the line shown) before the next write runs; one the
  // file could not take is shown rather than lost.
  const keep = async (token: CreatedPrincipalToken): Promise<void> => {
    minted.push(token);
    if (named === undefined) return void showToken(token);
    try {
      await writeTokensFile(named, previous, minted, here);
      saved = minted.length;
    } catch (cause) {
      minted.slice(saved).forEach((t) => showToken(t));
      // writeOutputFile's own refusal already names the file and why (`cannot write F: …`).
      const why = isBatonError(cause) ? cause.message : `cannot write ${named}: ${fileReason(cause)}`;
      throw new BatonError('usage', `the tokens file: ${why}`, {}, { cause });
    }
  };
  const applied: PlannedItem[] = [];
  try {
    await execute(p, keep, applied);
  } catch (error) {
    throw interrupted(error, applied, minted, named === undefined ? 0 : saved, named);
  }
  const changed = p.items.some((i) => i.action !== 'unchanged');
  return { items: p.items, changed, ...(named !== undefined && { tokensFile: named }) };
}

/**
 * A failed apply says what it wrote before the failure (`details.applied`: the refusal is no longer
 * "nothing changed", and `baton apply` exits 1, not 2), and where the tokens it minted went (never
 * the secrets themselves). Re-running the fixed file converges: every write is idempotent.
 */
function interrupted(
  error: unknown,
  applied: readonly PlannedItem[],
  minted: readonly CreatedPrincipalToken[],
  saved: number,
  named: string | undefined,
): unknown {
  if (applied.length === 0 || !(error instanceof BatonError)) return error;
  // Minted tokens are named once, with where they went (below).
  const done = applied.filter((i) => i.kind !== 'token').map((i) => `${i.kind} ${i.id} ${DONE[i.action]}`);
  let message = error.message;
  if (done.length > 0) message += ` (applied before the failure: ${done.join(', ')})`;
  if (minted.length > 0) {
    const where =
      saved === minted.length
        ? `written to ${named}`
        : saved === 0
          ? 'shown once'
          : `${saved} written to ${named}, the rest shown once`;
    message += ` (stopped after minting ${minted.map((t) => t.name).join(', ')}: ${where})`;
  }
  return new BatonError(
    error.code,
    message,
    {
      ...error.details,
      applied: applied.map((i) => ({ kind: i.kind, id: i.id, action: i.action })),
      ...(minted.length > 0 && { minted: minted.map((t) => t.name) }),
    },
    { cause: error },
  );
}

/** Whether a failed apply had written something first (`interrupted` said so). */
export function appliedBefore(error: unknown): boolean {
  if (!(error instanceof BatonError)) return false;
  const applied = (error.details as Record<string, unknown>)['applied'];
  return Array.isArray(applied) && applied.length > 0;
}

const DONE: Readonly<Record<PlannedItem['action'], string>> = {
  create: 'created',
  update: 'updated',
  remove: 'removed',
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

/** A minted token that had no tokens file: shown this once, never again. */
export function printOnceLine(t: CreatedPrincipalToken): string {
  return `token ${t.name} (${t.role}, shown once): ${t.token}\n`;
}
