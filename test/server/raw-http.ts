/**
 * Raw HTTP/1.1 over node:net, for requests a client library would tidy first (fetch merges
 * repeated headers and refuses a GET body): the bytes are sent as written, the answer is read
 * until the server closes the connection (send `Connection: close`; deadline 5 s).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { JsonObject } from '../../src/core/json.js';

export interface RawAnswer {
  readonly status: number;
  readonly type: string;
  /** The status line and headers, as received. */
  readonly head: string;
  readonly body: JsonObject;
  readonly text: string;
}

/** Send bytes, read until the server closes (deadline 5 s), parse the status line and body. */
export function raw(url: string, bytes: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 5 s'));
    }, 5_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined); // the server may reset after answering
    socket.on('close', () => {
      clearTimeout(deadline);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const type = /^content-type: *(.+)$/im.exec(head)?.[1]?.trim() ?? '';
      let parsed: JsonObject;
      try {
        parsed = JSON.parse(body) as JsonObject;
      } catch {
        parsed = {};
      }
      resolve({ status, type, head, body: parsed, text });
    });
    socket.write(bytes);
  });
}

export function assertRawProblem(a: RawAnswer, status: number, code: string): void {
  assert.equal(a.status, status, `expected ${status} ${code}: ${a.text.slice(0, 300)}`);
  assert.match(a.type, /^application\/problem\+json/);
  assert.equal(a.body['code'], code);
  assert.equal(a.body['status'], status);
  assert.equal(a.body['type'], `urn:baton:problem:${code}`);
  assert.equal(typeof a.body['detail'], 'string');
}
