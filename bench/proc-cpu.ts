/**
 * CPU time of child process trees, for benches whose work is split across processes: under a loaded
 * machine wall-clock latency mostly measures waiting for a core, CPU per call much less so. Linux
 * /proc only (utime + stime in clock ticks of 100 Hz, the kernel's USER_HZ); NaN elsewhere, and the
 * bench then leaves the CPU column out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { processCpuMs } from './support.js';

const TICK_MS = 10;

function ownCpuMs(pid: number): number {
  // The command name may hold spaces or parentheses: the fields start after the last ") ".
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

function children(pid: number): number[] {
  const out: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
    if (text !== '') out.push(...text.split(' ').map(Number));
  }
  return out;
}

/** The CPU of `pid` and every live descendant, in ms; NaN when /proc cannot tell. */
export function treeCpuMs(pid: number): number {
  try {
    return ownCpuMs(pid) + children(pid).reduce((sum, c) => sum + treeCpuMs(c), 0);
  } catch {
    return Number.NaN;
  }
}

/** This process plus the trees of `pids`: the clock of a side whose work runs in children too. */
export function cpuClock(pids: () => readonly number[]): () => number {
  return () => pids().reduce((sum, p) => sum + treeCpuMs(p), processCpuMs());
}

/** The calling thread's time on a CPU and runnable but waiting for one, in µs (cumulative). */
export interface ThreadTimes {
  readonly onCpuMicros: number;
  readonly waitingMicros: number;
}

/**
 * This thread's scheduler times from /proc/thread-self/schedstat (nanoseconds, unlike stat's
 * 10 ms ticks, so a bench round of a few milliseconds is measured): what the main thread itself
 * spent per SET or call, and how long it was ready to run while both cores were taken. Undefined
 * where the kernel does not expose it (not Linux, or schedstats compiled out).
 */
export function threadTimes(): ThreadTimes | undefined {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').trim().split(' ');
    const onCpu = Number(run) / 1000;
    const waiting = Number(wait) / 1000;
    return Number.isFinite(onCpu) && Number.isFinite(waiting)
      ? { onCpuMicros: onCpu, waitingMicros: waiting }
      : undefined;
  } catch (error) {
    // Only "this kernel has no such file" means "not told"; anything else is a real failure.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return undefined;
    throw error;
  }
}

/**
 * A clock of another process's time on a CPU, in ms, from /proc/<pid>/schedstat (nanoseconds): what
 * a PostgreSQL backend spent between two reads, where stat's 10 ms ticks could not tell. Checked
 * once here, so each reading is one small file read. Undefined where the kernel does not expose it,
 * or `pid` is not a process of `command` here (a server in a container or on another machine has
 * pids of its own).
 */
export function processCpuClock(pid: number, command: string): (() => number) | undefined {
  const read = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(command)) return undefined;
    return Number.isFinite(read()) ? read : undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return undefined;
    throw error;
  }
}
