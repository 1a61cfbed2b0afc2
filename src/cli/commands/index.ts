import type { Command } from '../command.js';
import { conformanceCommand } from './conformance.js';
import { demoCommand } from './demo.js';
import { digestCommand, jcsCommand } from './jcs.js';
import { leaseCommand } from './lease.js';
import { logCommand } from './log.js';
import { mcpCommand } from './mcp.js';
import { migrateCommand } from './migrate.js';
import { reconcileCommand } from './reconcile.js';
import { sandboxCommand } from './sandbox.js';
import { serveCommand } from './serve.js';
import { sorCommand } from './sor.js';
import { tokensCommand } from './tokens.js';

/** Every `baton` command, in the order `baton --help` lists them. */
export const commands: readonly Command[] = [
  serveCommand,
  tokensCommand,
  migrateCommand,
  logCommand,
  reconcileCommand,
  sandboxCommand,
  sorCommand,
  mcpCommand,
  leaseCommand,
  jcsCommand,
  digestCommand,
  demoCommand,
  conformanceCommand,
];
