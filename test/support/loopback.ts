/**
 * A real HTTP server on loopback for one test: listening on 127.0.0.1 at a port the system picks,
 * closed with its connections when the test ends (network tests stay on loopback).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/** Listens on 127.0.0.1:0 until the test ends; the server's origin (`http://127.0.0.1:<port>`). */
export async function listenLoopback(t: TestContext, server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    return closed;
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
