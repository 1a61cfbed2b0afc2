/**
 * The failure of a server command (`serve`, `sandbox`, `sor`, `issuer`) to start listening: typed
 * `unavailable` (exit 1, as every command exits for it), naming the address and the OS's reason,
 * `cannot listen on 127.0.0.1:4000: the address is in use (EADDRINUSE)` (docs/operations.md).
 */
import { BatonError, isBatonError } from '../core/errors.js';

const WHY: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is in use',
  EACCES: 'permission denied: ports below 1024 need privileges',
  EADDRNOTAVAIL: 'no local interface has this address',
  ENOTFOUND: 'the host name does not resolve',
};

/** `HOST` as a URL writes it: an IPv6 address in brackets. */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export function listenError(cause: unknown, host: string, port: number): BatonError {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  const known = code === undefined ? undefined : WHY[code];
  // The address, then why in words, then the OS's code for a search (`… in use (EADDRINUSE)`);
  // an unknown failure keeps node's own message, which names its code already.
  const why =
    known !== undefined
      ? `${known} (${code ?? ''})`
      : cause instanceof Error
        ? cause.message
        : 'unknown failure';
  return new BatonError('unavailable', `cannot listen on ${urlHost(host)}:${port}: ${why}`, {}, { cause });
}

/**
 * The failure of a whole start (open, register, listen) of `sor` or `issuer`: a listen failure as
 * listenError says it, a typed error as it is, anything else `unavailable` with its own message.
 */
export function startError(cause: unknown, host: string, port: number): BatonError {
  if (isBatonError(cause)) return cause;
  const e = cause as NodeJS.ErrnoException | undefined;
  if (e?.syscall === 'listen' || e?.syscall === 'getaddrinfo') return listenError(cause, host, port);
  const why = cause instanceof Error ? cause.message : 'unknown failure';
  return new BatonError('unavailable', `cannot start on ${urlHost(host)}:${port}: ${why}`, {}, { cause });
}
