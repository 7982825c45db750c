import { VISIT_STATUSES } from '../../api/types.js';
import { UsageError } from '../../errors.js';

/**
 * A set of visit statuses that answers `has()` whatever the case of the value asked about: the
 * user's `BOOKED` and a server's `Booked` are the same status.
 */
class StatusSet extends Set<string> {
  override has(value: string): boolean {
    return super.has(value.toLowerCase());
  }
}

/** Edit distance (insert, delete, replace, swap two neighbours): how far a typo is from a status. */
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}

/** The known status nearest to `value`, when it is near enough to be a typo of it. */
export function nearest(value: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const dd = distance(value, k);
    if (dd < bestD) {
      best = k;
      bestD = dd;
    }
  }
  // A typo, not another word: at most a third of the letters wrong (and at least one allowed).
  return best !== undefined && bestD <= Math.max(1, Math.floor(best.length / 3)) ? best : undefined;
}

/**
 * `--visit-status` as typed: comma-separated, any case, `-` or a space for `_` (`Ready-To-Book`).
 * An unknown status is a usage error naming the nearest known one, before any request. A status
 * newer than this tool is passed on purpose with a leading `+` (`+awaiting_review`): taken as
 * given, compared without regard to case.
 */
export function parseVisitStatuses(value: string): Set<string> {
  const set = new StatusSet();
  for (const part of value.split(',')) {
    const raw = part.trim();
    if (raw === '') continue;
    if (raw.startsWith('+')) {
      const newer = raw.slice(1).trim().toLowerCase();
      if (newer === '') throw new UsageError('--visit-status: "+" needs a status after it (+new_status)');
      set.add(newer);
      continue;
    }
    const s = raw.toLowerCase().replace(/[\s-]+/g, '_');
    if ((VISIT_STATUSES as readonly string[]).includes(s)) {
      set.add(s);
      continue;
    }
    const near = nearest(s, VISIT_STATUSES);
    throw new UsageError(
      `--visit-status: unknown visit status "${raw}"${near ? `; did you mean "${near}"?` : ''}`,
      `Known statuses: ${VISIT_STATUSES.join(', ')}. A status newer than this tool: prefix it with + (--visit-status +${s}).`,
    );
  }
  if (set.size === 0) throw new UsageError('--visit-status needs at least one status');
  return set;
}
