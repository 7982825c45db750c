import { VISIT_STATUSES } from '../../api/types.js';
import { UsageError } from '../../errors.js';
import { nearest } from '../../util/suggest.js';

// `has()` ignores case: the user's `BOOKED` and a server's `Booked` are the same status.
class StatusSet extends Set<string> {
  override has(value: string): boolean {
    return super.has(value.toLowerCase());
  }
}

/** `--visit-status` as typed: comma-separated, any case, `-` or a space for `_` (`Ready-To-Book`). */
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
    // A typo, not another word: at most a third of the letters wrong (and at least one allowed).
    const near = nearest(s, VISIT_STATUSES, (best) => Math.max(1, Math.floor(best.length / 3)));
    throw new UsageError(
      `--visit-status: unknown visit status "${raw}"${near ? `; did you mean "${near}"?` : ''}`,
      `Known statuses: ${VISIT_STATUSES.join(', ')}. A status newer than this tool: prefix it with + (--visit-status +${s}).`,
    );
  }
  if (set.size === 0) throw new UsageError('--visit-status needs at least one status');
  return set;
}
