/** Where an import stands, as shown in the job's `progress`. */
export interface Progress {
  phase: string;
  percent: number | null;
  objects_received: number | null;
  bytes_received: number | null;
  /** How many objects the source is sending, from git's "(450/1000)". */
  objects_total: number | null;
  /** The transfer rate git last reported ("| 2.00 MiB/s"), in bytes per second. */
  bytes_per_second: number | null;
}

const PHASES: Record<string, string> = {
  'enumerating objects': 'counting_objects',
  'counting objects': 'counting_objects',
  'compressing objects': 'compressing_objects',
  'receiving objects': 'receiving_objects',
  // A push's sending (push mirrors): its bytes count as moved, as a fetch's received bytes do.
  'writing objects': 'writing_objects',
  'resolving deltas': 'resolving_deltas',
  'checking connectivity': 'checking_connectivity',
};

const UNITS: Record<string, number> = { bytes: 1, byte: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/**
 * Reads the last progress report in a piece of git's `--progress` stderr, such as
 * "Receiving objects:  45% (450/1000), 1.20 MiB | 2.00 MiB/s" (lines end in \r or \n,
 * remote lines start with "remote: "). Returns null when the text holds no report.
 * `previous` carries objects, bytes and the rate over from earlier reports of the same fetch.
 */
export function parseGitProgress(text: string, previous: Progress | null = null): Progress | null {
  let found: Progress | null = null;
  for (const rawLine of text.split(/[\r\n]+/)) {
    const line = rawLine.replace(/^remote:\s*/, '').trim();
    const m = /^([A-Za-z ]+?):\s+(?:(\d{1,3})% \((\d+)\/(\d+)\)|(\d+))?(.*)$/.exec(line);
    if (!m) continue;
    const phase = PHASES[m[1].toLowerCase()];
    if (!phase) continue;
    const base = found ?? previous;
    const next: Progress = {
      phase,
      percent: m[2] !== undefined ? Number(m[2]) : null,
      objects_received: base?.objects_received ?? null,
      bytes_received: base?.bytes_received ?? null,
      objects_total: base?.objects_total ?? null,
      bytes_per_second: base?.bytes_per_second ?? null,
    };
    if (phase === 'receiving_objects' || phase === 'writing_objects') {
      next.objects_received = Number(m[3] ?? m[5] ?? 0);
      if (m[4] !== undefined) next.objects_total = Number(m[4]);
      const bytes = /,\s*([\d.]+)\s*(bytes?|KiB|MiB|GiB|TiB)/i.exec(m[6]);
      if (bytes) next.bytes_received = Math.round(Number(bytes[1]) * UNITS[bytes[2].toLowerCase()]);
      const rate = /\|\s*([\d.]+)\s*(bytes?|KiB|MiB|GiB|TiB)\/s/i.exec(m[6]);
      if (rate) next.bytes_per_second = Math.round(Number(rate[1]) * UNITS[rate[2].toLowerCase()]);
    }
    found = next;
  }
  return found;
}

// Where each phase sits on the job's one overall scale (start, end), so the figure a
// user sees moves forward only: the copy takes most of it, LFS and the move the rest.
const SPANS: Record<string, [number, number]> = {
  connecting: [0, 0],
  counting_objects: [0, 2],
  compressing_objects: [2, 5],
  receiving_objects: [5, 70],
  resolving_deltas: [70, 85],
  checking_connectivity: [85, 88],
  checking_submodules: [88, 88],
  fetching_lfs: [88, 98],
  finalizing: [98, 99],
  done: [100, 100],
};

/** The overall percent (0–100) for a phase and the percent git or the LFS fetch reports within it; null for an unknown phase. */
export function overallPercent(phase: string, within: number | null): number | null {
  const span = SPANS[phase];
  if (!span) return null;
  const share = Math.max(0, Math.min(100, within ?? 0)) / 100;
  return Math.floor(span[0] + (span[1] - span[0]) * share);
}
