import type { Command } from '../command.js';
import { digestCommand, jcsCommand } from './jcs.js';

/** Every `baton` command, in the order `baton --help` lists them. */
export const commands: readonly Command[] = [jcsCommand, digestCommand];
