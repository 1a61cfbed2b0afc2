import type { Command } from '../command.js';
import { digestCommand, jcsCommand } from './jcs.js';
import { leaseCommand } from './lease.js';
import { logCommand } from './log.js';
import { migrateCommand } from './migrate.js';
import { sandboxCommand } from './sandbox.js';
import { sorCommand } from './sor.js';

/** Every `baton` command, in the order `baton --help` lists them. */
export const commands: readonly Command[] = [
  migrateCommand,
  logCommand,
  sandboxCommand,
  sorCommand,
  leaseCommand,
  jcsCommand,
  digestCommand,
];
