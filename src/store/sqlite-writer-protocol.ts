/**
 * What the SQLite engine and its writer thread say to each other (docs/store.md, "The writer
 * thread"). One request at a time: the engine's writer is strictly serial (group commit), so a
 * request never overtakes another. Statements inside a transaction are answered synchronously (the
 * engine's thread waits on `ctl`, a few microseconds); BEGIN and COMMIT, which may wait for a lock
 * or an fsync, are answered asynchronously, so the engine's event loop serves requests meanwhile.
 */
import Database from 'better-sqlite3';
import { BatonError, isBatonError, type BatonErrorCode } from '../core/errors.js';
import type { SqlValue } from './engine.js';

/** Slots of the shared Int32Array `ctl`. */
export const CTL = {
  /** Sequence number of the last request the engine posted. */
  request: 0,
  /** Sequence number of the last synchronous reply the writer posted. */
  reply: 1,
  /** 1 once the writer's loop has ended (closed, or stopped by an error). */
  stopped: 2,
} as const;
export const CTL_SLOTS = 3;

export type WriterRequest =
  | { readonly op: 'all' | 'get' | 'run'; readonly sql: string; readonly params: readonly SqlValue[] }
  | { readonly op: 'exec'; readonly sql: string }
  | { readonly op: 'begin'; readonly busyTimeoutMs: number }
  | { readonly op: 'commit' }
  | { readonly op: 'close' };

/** Requests answered on the asynchronous port (they may block the writer for milliseconds). */
export function isAsyncRequest(request: WriterRequest): boolean {
  return request.op === 'begin' || request.op === 'commit' || request.op === 'close';
}

/** An error as it crosses the thread boundary: a BatonError keeps its code and details. */
export type WireError =
  | {
      readonly kind: 'baton';
      readonly code: BatonErrorCode;
      readonly message: string;
      readonly details: Record<string, unknown>;
    }
  | { readonly kind: 'sqlite'; readonly code: string; readonly message: string }
  | { readonly kind: 'error'; readonly name: string; readonly message: string };

export interface WriterReply {
  readonly seq: number;
  /** Whether the write connection is inside a transaction after the request. */
  readonly inTransaction: boolean;
  readonly value?: unknown;
  readonly error?: WireError;
}

export interface WriterData {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly fileMustExist: boolean;
  readonly statementCacheSize: number;
  readonly ctl: SharedArrayBuffer;
}

export function toWire(error: unknown): WireError {
  if (isBatonError(error)) {
    return { kind: 'baton', code: error.code, message: error.message, details: { ...error.details } };
  }
  if (error instanceof Database.SqliteError) {
    return { kind: 'sqlite', code: error.code, message: error.message };
  }
  if (error instanceof Error) return { kind: 'error', name: error.name, message: error.message };
  return { kind: 'error', name: 'Error', message: String(error) };
}

/** The same error on this side: a BatonError with its code, a driver error with its SQLite code. */
export function fromWire(wire: WireError): Error {
  switch (wire.kind) {
    case 'baton':
      return new BatonError(wire.code, wire.message, wire.details);
    case 'sqlite':
      return new Database.SqliteError(wire.message, wire.code);
    default: {
      const error = wire.name === 'TypeError' ? new TypeError(wire.message) : new Error(wire.message);
      if (wire.name !== 'TypeError' && wire.name !== 'Error') error.name = wire.name;
      return error;
    }
  }
}
