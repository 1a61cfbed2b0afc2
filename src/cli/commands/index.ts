import type { Command } from '../command.js';
import { applyCommand } from './apply.js';
import { conformanceCommand } from './conformance.js';
import { demoCommand } from './demo.js';
import { harnessCommand, stopMatrixCommand } from './harness.js';
import { digestCommand, jcsCommand } from './jcs.js';
import { issuerCommand } from './issuer.js';
import { leaseCommand } from './lease.js';
import { logCommand } from './log.js';
import { mcpCommand } from './mcp.js';
import { migrateCommand } from './migrate.js';
import { missionsCommand } from './missions.js';
import { occurrencesCommand } from './occurrences.js';
import { observeCommand } from './observe.js';
import { producersCommand } from './producers.js';
import { reconcileCommand } from './reconcile.js';
import { reportCommand } from './report.js';
import { sandboxCommand } from './sandbox.js';
import { authoritiesCommand, domainCommand, profilesCommand } from './setup-verbs.js';
import { serveCommand } from './serve.js';
import { sorCommand } from './sor.js';
import { tokensCommand } from './tokens.js';

/** Every `baton` command, in the order `baton --help` lists them. */
export const commands: readonly Command[] = [
  serveCommand,
  tokensCommand,
  applyCommand,
  domainCommand,
  profilesCommand,
  authoritiesCommand,
  producersCommand,
  migrateCommand,
  logCommand,
  occurrencesCommand,
  reconcileCommand,
  harnessCommand,
  stopMatrixCommand,
  sandboxCommand,
  sorCommand,
  mcpCommand,
  leaseCommand,
  issuerCommand,
  missionsCommand,
  jcsCommand,
  digestCommand,
  demoCommand,
  conformanceCommand,
  observeCommand,
  reportCommand,
];
