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
