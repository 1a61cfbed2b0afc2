/** `baton ARGV…` in process with `env` added to the environment for the call, its output captured. */
import { main } from '../../src/cli/baton.js';
import { captureIo } from '../store/support.js';

export async function runBaton(argv: string[], env: Record<string, string> = {}) {
  const io = captureIo();
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const code = await main(argv, io);
    return { code, out: io.out.join(''), err: io.err.join('') };
  } finally {
    process.env = saved;
  }
}
