import { VISIT_STATUSES } from '../api/types.js';
import { UsageError } from '../errors.js';
import { nearest } from '../util/suggest.js';

// The visit-status progress rule. The spec lists the visit statuses in the order a visit moves through
// them; exam_not_completed (the exam did not happen) and canceled are side exits, not steps of it.

/** The spec's visit statuses in progress order, without exam_not_completed and canceled. */
export const PROGRESS: readonly string[] = VISIT_STATUSES.filter(
  (s) => s !== 'exam_not_completed' && s !== 'canceled',
);

const STEP = new Map<string, number>(PROGRESS.map((s, i) => [s, i]));
const BOOKED = STEP.get('booked') as number;

/**
 * Whether a visit at `status` has reached `target`: it is at it or later in PROGRESS. A visit at
 * exam_not_completed has reached booked and earlier, never complete or later; a canceled visit, or one at a
 * status this tool does not know, has reached only that very status. Case does not matter.
 */
export function reached(status: string, target: string): boolean {
  const s = status.toLowerCase();
  const t = target.toLowerCase();
  if (s === t) return true;
  const at = s === 'exam_not_completed' ? BOOKED : STEP.get(s);
  const goal = STEP.get(t);
  return at !== undefined && goal !== undefined && at >= goal;
}

/**
 * Where a visit stands, for "the most advanced visit": the position in PROGRESS; exam_not_completed just
 * above booked (it reached booked, never complete); canceled below every progress status; a status newer
 * than this tool above canceled and below every known progress status.
 */
export function visitRank(status: unknown): number {
  if (typeof status !== 'string') return Number.NEGATIVE_INFINITY;
  const s = status.toLowerCase();
  if (s === 'exam_not_completed') return BOOKED + 0.5;
  if (s === 'canceled') return -1;
  return STEP.get(s) ?? -0.5;
}

/** Whether a visit at `status` can no longer reach any of `targets`: canceled, or stopped at exam_not_completed. */
export function stopped(status: string, targets: Iterable<string>): boolean {
  const s = status.toLowerCase();
  if (s !== 'canceled' && s !== 'exam_not_completed') return false;
  for (const t of targets) if (reached(s, t)) return false;
  return true;
}

export type Standing = 'done' | 'waiting' | 'cannot';

/**
 * A referral's standing against `targets`: done when each counted visit has reached one of them, cannot
 * when a counted visit stopped short of all of them, else waiting. Canceled visits are not counted unless
 * every visit is canceled; a referral with no visit yet is waiting.
 */
export function standing(visits: readonly { status?: unknown }[], targets: Iterable<string>): Standing {
  const wanted = [...targets];
  const statuses = visits.map((v) => (typeof v?.status === 'string' ? v.status : ''));
  if (statuses.length === 0) return 'waiting';
  const live = statuses.filter((s) => s.toLowerCase() !== 'canceled');
  const counted = live.length > 0 ? live : statuses;
  if (counted.every((s) => wanted.some((t) => reached(s, t)))) return 'done';
  return counted.some((s) => stopped(s, wanted)) ? 'cannot' : 'waiting';
}

// `has()` ignores case: the user's `BOOKED` and a server's `Booked` are the same status.
class StatusSet extends Set<string> {
  override has(value: string): boolean {
    return super.has(value.toLowerCase());
  }
}

/** The known status nearest to `value`, when it is near enough to be a typo of it. */
function nearestStatus(value: string, known: readonly string[]): string | undefined {
  // A typo, not another word: at most a third of the letters wrong (and at least one allowed).
  return nearest(value, known, (best) => Math.max(1, Math.floor(best.length / 3)));
}

/**
 * A list of visit statuses as typed (`--visit-status`, `--until`): comma-separated, any case, `-` or a space
 * for `_` (`Ready-To-Book`), `+NAME` for a status newer than this tool; an unknown one is a usage error that
 * suggests the nearest known status. The set it returns ignores case in `has()`.
 */
export function parseStatusList(value: string, flag: string): Set<string> {
  const set = new StatusSet();
  for (const part of value.split(',')) {
    const raw = part.trim();
    if (raw === '') continue;
    if (raw.startsWith('+')) {
      const newer = raw.slice(1).trim().toLowerCase();
      if (newer === '') throw new UsageError(`${flag}: "+" needs a status after it (+new_status)`);
      set.add(newer);
      continue;
    }
    const s = raw.toLowerCase().replace(/[\s-]+/g, '_');
    if ((VISIT_STATUSES as readonly string[]).includes(s)) {
      set.add(s);
      continue;
    }
    const near = nearestStatus(s, VISIT_STATUSES);
    throw new UsageError(
      `${flag}: unknown visit status "${raw}"${near ? `; did you mean "${near}"?` : ''}`,
      `Known statuses: ${VISIT_STATUSES.join(', ')}. A status newer than this tool: prefix it with + (${flag} +${s}).`,
    );
  }
  if (set.size === 0) throw new UsageError(`${flag} needs at least one status`);
  return set;
}

/** `--visit-status` as typed (see parseStatusList). */
export const parseVisitStatuses = (value: string): Set<string> => parseStatusList(value, '--visit-status');
