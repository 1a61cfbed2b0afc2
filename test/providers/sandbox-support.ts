// Shared helpers for the sandbox provider tests: a started sandbox, requests, signature checks.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createSandboxProvider,
  sandboxHeaderName,
  sandboxSignedString,
  verifySandboxSignature,
  type SandboxOptions,
  type SandboxProvider,
  type SandboxVerification,
} from '../../src/providers/sandbox/index.js';

export const ACCOUNT = 'acct_sandbox';
export const ADMIN = 'admin-token-for-tests';

export interface Started {
  sandbox: SandboxProvider;
  url: string;
  close: () => Promise<void>;
}

/** A payment (or a 404 about one) as the tests read it; other members stay `unknown`. */
export interface PaymentDoc {
  reference: string;
  status: string;
  account: string;
  idempotency_key: string;
  created_at: string;
  [member: string]: unknown;
}

export interface ListDoc {
  data: PaymentDoc[];
  has_more: boolean;
  complete: boolean;
}

export async function readJson<T = PaymentDoc>(response: Promise<Response>): Promise<T> {
  return (await (await response).json()) as T;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Started> {
  const sandbox = createSandboxProvider({ adminToken: ADMIN, ...options });
  const url = await sandbox.listen(0);
  return { sandbox, url, close: () => sandbox.close() };
}

export function paymentBody(invoice: string, amount = 1250): Record<string, unknown> {
  return { amount, currency: 'eur', payee: 'acme-supplies', invoice };
}

export function createPayment(
  url: string,
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}/v1/accounts/${ACCOUNT}/payments`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key !== undefined && { 'idempotency-key': key }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function get(url: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}${path}`, { headers });
}

export function admin(url: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ADMIN}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

export interface Checked {
  status: number;
  text: string;
  json: Record<string, unknown>;
  hmac: SandboxVerification;
  ed25519: SandboxVerification;
  headers: Headers;
}

/** Read a response and verify both of its signatures against the sandbox's pins. */
export async function checked(
  sandbox: SandboxProvider,
  response: Response,
  method = 'GET',
): Promise<Checked> {
  const text = await response.text();
  const target = new URL(response.url);
  const signedString = sandboxSignedString({ method, path: target.pathname + target.search, body: text });
  const verify = (kind: 'hmac' | 'ed25519'): SandboxVerification =>
    verifySandboxSignature({
      header: response.headers.get(sandboxHeaderName(kind)),
      signedString,
      pin: sandbox.pins(),
      nowMs: Date.now(),
    });
  return {
    status: response.status,
    text,
    json: JSON.parse(text) as Record<string, unknown>,
    hmac: verify('hmac'),
    ed25519: verify('ed25519'),
    headers: response.headers,
  };
}

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A real local webhook receiver that records every request and answers `status`. */
export async function startReceiver(
  status = 204,
): Promise<{ url: string; received: Received[]; server: Server; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
