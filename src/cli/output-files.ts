/**
 * Files a command writes (`--out`) or reads (`--key`): checked BEFORE the work they hold the result
 * of, written through `FILE.partial` (fsynced, then renamed — or, for a file that must never replace
 * another, linked), and every failure a typed `usage` error that names the file and why (`cannot
 * write FILE: it is a folder (EISDIR)`), never a stack. A failed write leaves no `.partial` behind,
 * and success is printed only after the rename.
 */
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { BatonError } from '../core/errors.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or folder',
  EISDIR: 'it is a folder',
  ENOTDIR: 'a part of the path is not a folder',
  EEXIST: 'it exists already',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENAMETOOLONG: 'the name is too long',
  EFBIG: 'the file is too large (a file size limit)',
};

/** The OS's reason for a failed file operation, in words, with its errno code. */
export function fileReason(cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return `${REASONS[code] ?? 'failed'} (${code})`;
  return cause instanceof Error ? cause.message : 'failed';
}

export function cannotWrite(file: string, cause: unknown): BatonError {
  return new BatonError('usage', `cannot write ${file}: ${fileReason(cause)}`, { path: file }, { cause });
}

function refuse(file: string, why: string): BatonError {
  return new BatonError('usage', `cannot write ${file}: ${why}`, { path: file });
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function writableFolder(folder: string, file: string): void {
  try {
    accessSync(folder, constants.W_OK);
  } catch (cause) {
    throw refuse(file, `cannot write into the folder ${folder}: ${fileReason(cause)}`);
  }
}

/**
 * Refuse, before any work, an output FILE that cannot be written: its folder must exist (none is
 * created) and be writable, and FILE must not be a folder. An existing file is replaced.
 */
export function checkOutputFile(file: string): void {
  const folder = dirname(file);
  const dir = statOf(folder);
  if (dir === undefined) throw refuse(file, `no folder ${folder}`);
  if (!dir.isDirectory()) throw refuse(file, `${folder} is not a folder`);
  if (statOf(file)?.isDirectory() === true) throw refuse(file, 'it is a folder');
  writableFolder(folder, file);
}

/**
 * Make FOLDER and its missing ancestors one level at a time (never `mkdirSync(recursive)`: on a
 * path the OS answers oddly — `/proc/nope` as root — Node 20's recursive mkdir loops on ENOENT
 * forever). A level that cannot be made is `usage: cannot write FOLDER: …` with the OS's reason.
 */
export function makeFolder(folder: string): void {
  const missing: string[] = [];
  let at = resolve(folder);
  for (; statOf(at) === undefined && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  if (missing.length > 0 && statOf(at)?.isDirectory() === false)
    throw refuse(folder, `${at} is not a folder`);
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (cause) {
      // Made meanwhile by another run: fine if it is a folder (checked below).
      if ((cause as { code?: unknown } | null)?.code !== 'EEXIST') throw cannotWrite(folder, cause);
    }
  }
  const made = statOf(folder);
  if (made === undefined) throw refuse(folder, 'it could not be made');
  if (!made.isDirectory()) throw refuse(folder, 'it is a file, not a folder');
}

/**
 * Refuse, before any work, an output FOLDER that cannot be made or written into: it is made now
 * if missing (see makeFolder), then a trial entry is created in it and removed — a real write, not
 * access(2), which says yes to root for any folder, `/proc` included.
 */
export function checkOutputFolder(folder: string): void {
  const self = statOf(folder);
  if (self !== undefined && !self.isDirectory()) throw refuse(folder, 'it is a file, not a folder');
  makeFolder(folder);
  const trial = join(folder, `.baton-write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    closeSync(openSync(trial, 'wx', 0o600));
  } catch (cause) {
    throw refuse(folder, `cannot write into it: ${fileReason(cause)}`);
  }
  rmSync(trial, { force: true });
}

/**
 * Write FILE through FILE.partial: `body` writes it, then it is fsynced and renamed over FILE. On
 * any failure FILE.partial is removed; a failed write or rename is `usage: cannot write FILE: …`,
 * and an error of `body`'s own passes through unchanged. Returns what `body` returns.
 */
export async function writeThroughPartial<T>(
  file: string,
  body: (write: (chunk: string) => void) => Promise<T> | T,
  mode = 0o666,
): Promise<T> {
  const out = openPartial(file, mode);
  try {
    const result = await body(out.write);
    out.commit();
    return result;
  } catch (error) {
    out.abandon();
    throw error;
  }
}

/** Write `text` to FILE through FILE.partial (see writeThroughPartial), synchronously. */
export function writeOutputFile(file: string, text: string, mode = 0o666): void {
  const out = openPartial(file, mode);
  try {
    out.write(text);
    out.commit();
  } catch (error) {
    out.abandon();
    throw error;
  }
}

/**
 * Write `text` to a NEW file FILE through FILE.partial: fsynced, then published with link(2), which
 * never replaces a FILE that exists (EEXIST: `cannot write FILE: it exists already`), then the
 * partial name removed. So FILE appears whole or not at all, and a FILE that appeared since the
 * caller's check is left as it is (a key is never overwritten). Needs a file system with hard links.
 */
export function writeNewOutputFile(file: string, text: string, mode = 0o666): void {
  const out = openPartial(file, mode);
  try {
    out.write(text);
    out.commit('new');
  } catch (error) {
    out.abandon();
    throw error;
  }
}

function leftoverPartial(file: string): BatonError {
  return refuse(
    file,
    `${file}.partial exists already (another run is writing ${file}, or one was killed: remove it)`,
  );
}

/**
 * Refuse, before any work, a FILE whose FILE.partial is there already (another run writing it, or
 * a killed one): the write through FILE.partial would refuse it only after the work was done.
 * The write itself still creates the partial exclusively, so a run starting after this check is
 * caught there too.
 */
export function checkNoPartial(file: string): void {
  try {
    lstatSync(`${file}.partial`); // lstat: even a dangling link there makes the exclusive create fail
  } catch (cause) {
    if ((cause as { code?: unknown } | null)?.code === 'ENOENT') return;
    throw cannotWrite(file, cause);
  }
  throw leftoverPartial(file);
}

/**
 * FILE.partial, open: written, then committed (fsync, close, rename over FILE — or, `new`, link as
 * FILE, which an existing FILE refuses, and unlink the partial name) or abandoned. It is
 * created new (`wx`), so it always gets `mode` (a file of secrets is never born with the mode of a
 * stale one); one that exists already is another run writing FILE, or one that was killed: it is
 * refused, never truncated under the other run or removed.
 */
function openPartial(file: string, mode: number) {
  const partial = `${file}.partial`;
  let fd: number;
  try {
    fd = openSync(partial, 'wx', mode);
  } catch (cause) {
    if ((cause as { code?: unknown } | null)?.code === 'EEXIST') throw leftoverPartial(file);
    throw cannotWrite(file, cause);
  }
  let open = true;
  const close = (): void => {
    open = false; // closed once, whatever closeSync says: never a second close of a reused fd
    closeSync(fd);
  };
  return {
    write: (chunk: string): void => {
      try {
        writeSync(fd, chunk);
      } catch (cause) {
        throw cannotWrite(file, cause);
      }
    },
    commit(as: 'replace' | 'new' = 'replace'): void {
      try {
        fsyncSync(fd);
        close();
        if (as === 'replace') renameSync(partial, file);
        else {
          linkSync(partial, file);
          rmSync(partial);
        }
      } catch (cause) {
        throw cannotWrite(file, cause);
      }
    },
    /** After a failure: the failure is what the caller reports; the partial file goes. */
    abandon(): void {
      if (open) close();
      rmSync(partial, { force: true });
    },
  };
}

/** Read a file a flag names (`--key FILE`): a typed `usage` error naming it when it cannot be read. */
export function readNamedFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    throw new BatonError(
      'usage',
      `cannot read ${what} ${file}: ${fileReason(cause)}`,
      { path: file },
      { cause },
    );
  }
}
