import type { Command } from '../command.js';
import { digestCommand, jcsCommand } from './jcs.js';
import { sandboxCommand } from './sandbox.js';

/** Every `baton` command, in the order `baton --help` lists them. */
export const commands: readonly Command[] = [sandboxCommand, jcsCommand, digestCommand];
