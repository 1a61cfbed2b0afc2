/**
 * AOC-REQ-005: a session's takeover reports the predecessor's open work — its in-doubt calls AND its
 * pre-entry reservations — on stderr and in the MCP `instructions` the agent reads at initialize
 * (docs/mcp.md "Sessions and generations"). Real world: a predecessor generation that created an
 * occurrence and died before entering it, Baton's HTTP server on SQLite, the in-process gateway.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileArguments } from '../../src/mcp/arguments.js';
import { deriveCall } from '../../src/mcp/derive.js';
import { parsePolicy } from '../../src/mcp/index.js';
import { PAY_TOOL } from './upstream-payments.js';
import { inProcessGateway, LINEAGE, makeWorld, payArgs } from './world.js';

test("AOC-REQ-005: the predecessor's pre-entry reservations are in the instructions and the log, beside its in-doubt calls", async (t) => {
  const w = await makeWorld(t);
  const p = parsePolicy(JSON.stringify(w.policy)).tools.get('pay');
  assert.ok(p !== undefined);
  const op = deriveCall(p, payArgs('inv-reserved'), undefined, compileArguments(PAY_TOOL, p)).operation;
  const predecessor = await w.baton().takeover(LINEAGE);
  const reserved = (await predecessor.create(op)).occurrence;
  assert.equal(reserved.phase, 'reserved');

  const lines: string[] = [];
  const { client } = await inProcessGateway(t, w, { log: (line) => lines.push(line) });
  const instructions = client.getInstructions() ?? '';
  assert.match(instructions, /No calls of a previous session are in doubt\./);
  assert.match(
    instructions,
    new RegExp(`pre-entry reservations \\(created, never entered or sent\\): ${reserved.id}`),
  );
  assert.ok(
    lines.some((l) => l.includes(`pre-entry reservations: ${reserved.id}`)),
    'the log names it too',
  );
});
