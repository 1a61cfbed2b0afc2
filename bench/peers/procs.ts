/** CPU clocks for the peer bench: this process, and a child's from /proc (Linux; NaN elsewhere). */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of `pid` (all threads) in ms, from fields 14 and 15 of /proc/<pid>/stat. */
export function childCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
  } catch {
    return Number.NaN;
  }
}

export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
