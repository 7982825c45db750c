import type { Referral } from '../api/types.js';
import { every } from '../util/timer.js';
import { visitStatusEvent } from '../webhook/events.js';
import type { EmulatorState } from './types.js';
import { nextVisitStatus } from './webhooks.js';

// Visits that move on by themselves (`imaging mock --advance-every 5s`), so that `referrals watch` can be
// tried and tested: every tick, each visit still under way takes one step along the spec's progress order,
// and some stop for good, at exam_not_completed (after booked) or canceled (before booking).

/** Where a visit stays: the end of the path and the two side exits. */
const STOPS = new Set(['sent_to_rp', 'exam_not_completed', 'canceled']);

/** A small stable number from a visit's id: which visits stop early does not change between runs. */
function lot(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return h % 100;
}

/** The status a visit takes next: one step on, or (for some visits) a stop at exam_not_completed or canceled. */
export function stepOf(visitId: string, current: string): string {
  const n = lot(visitId);
  if (current === 'booked' && n < 10) return 'exam_not_completed';
  if (n >= 90 && ['pending', 'pending_auth', 'co_signed', 'intake_sent', 'ready_to_book'].includes(current))
    return 'canceled';
  return nextVisitStatus(current);
}

/**
 * Moves one visit of a referral to `status` (the next one when not given), keeps the referral, and sends
 * the visit.status_changed event when a webhook URL is set. Undefined when the referral has no such visit.
 */
export function moveVisit(
  s: EmulatorState,
  referral: Referral,
  visitId: string,
  status?: string,
  now = new Date().toISOString(),
):
  | { updated: Referral; status: [string, string]; sent?: ReturnType<EmulatorState['webhooks']['send']> }
  | undefined {
  const updated = structuredClone(referral);
  const visit = updated.visits.find((v) => v.id === visitId);
  if (!visit) return undefined;
  const previous = visit.status;
  visit.status = status ?? nextVisitStatus(previous);
  s.referrals.put(updated);
  const change: [string, string] = [previous, visit.status];
  if (!s.webhooks.configured) return { updated, status: change };
  const sent = s.webhooks.send(visitStatusEvent(updated, visit, previous, now));
  return { updated, status: change, sent };
}

/** One tick: every visit not at a stop takes its step. */
export function advanceAll(s: EmulatorState): number {
  let moved = 0;
  for (let i = 0; i < s.referrals.total; i++) {
    let referral = s.referrals.at(i);
    for (const visit of referral.visits ?? []) {
      if (STOPS.has(visit.status)) continue;
      const done = moveVisit(s, referral, visit.id, stepOf(visit.id, visit.status));
      if (done) {
        referral = done.updated;
        moved++;
      }
    }
  }
  return moved;
}

/** Advances every `everyMs` until the returned function is called. */
export function startAdvancing(s: EmulatorState, everyMs: number): () => void {
  // --advance-every may be longer than a Node timer holds, which would then fire at once.
  return every(everyMs, () => advanceAll(s), { unref: true });
}
