// CPU time spent on this machine, read from Linux's /proc: what a bench's processes and the
// database server used while it measured, and how busy the cores were. Elsewhere (no /proc)
// every reading is empty and the figures built on it are left out.
import fs from 'node:fs';

/** Milliseconds per clock tick of /proc's times (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

/** CPU milliseconds by process id: its own time and its ended children's (a node's git processes count as the node's). */
export type CpuReading = Map<number, { comm: string; ms: number }>;

/** Reads every process's CPU time so far. */
export function readCpu(): CpuReading {
  const reading: CpuReading = new Map();
  const pids = (() => {
    try {
      return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
    } catch {
      return [];
    }
  })();
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      // Fields after the name: state is the first; utime, stime, cutime and cstime the 12th to 15th.
      const fields = stat.slice(close + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      reading.set(Number(pid), { comm: stat.slice(stat.indexOf('(') + 1, close), ms: ticks * TICK_MS });
    } catch {
      // It ended meanwhile.
    }
  }
  return reading;
}

/** The cores' busy and total milliseconds so far (all CPUs together), from /proc/stat; null without it. */
export function readCores(): { busy: number; total: number } | null {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = user + nice + system + irq + softirq + steal;
    return { busy: busy * TICK_MS, total: (busy + idle + iowait) * TICK_MS };
  } catch {
    return null;
  }
}

/**
 * The CPU milliseconds each group used between two readings: `groupOf` names a process's
 * group (or null to leave it out). A process that started and ended between the readings
 * is not seen, unless its parent was (its time is the parent's then).
 */
export function cpuUsed(before: CpuReading, after: CpuReading, groupOf: (pid: number, comm: string) => string | null): Record<string, number> {
  const used: Record<string, number> = {};
  for (const [pid, { comm, ms }] of after) {
    const group = groupOf(pid, comm);
    if (group === null) continue;
    used[group] = (used[group] ?? 0) + ms - (before.get(pid)?.ms ?? 0);
  }
  return used;
}
