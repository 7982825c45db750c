import { describe, expect, it } from 'vitest';
import { VISIT_STATUSES } from '../../src/api/types.js';
import { advanceAll, startAdvancing, stepOf } from '../../src/emulator/advance.js';
import { buildReferenceData } from '../../src/emulator/data/reference-data.js';
import { ReferralStore } from '../../src/emulator/data/referral-data.js';
import type { EmulatorState } from '../../src/emulator/types.js';
import { reached, visitRank } from '../../src/referrals/progress.js';

describe('visits that advance on their own', () => {
  it('each tick takes every visit one step on; some stop at exam_not_completed or canceled', () => {
    const referrals = new ReferralStore(1, 80, buildReferenceData(1));
    const state = { referrals, webhooks: { configured: false } } as unknown as EmulatorState;
    const statuses = () => {
      const out = new Map<string, string>();
      for (let i = 0; i < referrals.total; i++)
        for (const v of referrals.at(i).visits) out.set(v.id, v.status);
      return out;
    };
    const before = statuses();
    expect(advanceAll(state)).toBeGreaterThan(0);
    for (let k = 0; k < 14; k++) advanceAll(state);
    const after = statuses();
    const ends = [...after.values()];
    expect(ends.every((s) => ['sent_to_rp', 'exam_not_completed', 'canceled'].includes(s))).toBe(true);
    expect(ends.filter((s) => s === 'sent_to_rp').length).toBeGreaterThan(ends.length / 2);
    const newly = (status: string) => [...after].filter(([id, s]) => s === status && before.get(id) !== s);
    expect(newly('exam_not_completed').length).toBeGreaterThan(0);
    expect(newly('canceled').length).toBeGreaterThan(0);
    expect(advanceAll(state)).toBe(0);
  });

  it('a step never goes back', () => {
    for (const id of ['a', 'b', 'c', 'visit-42', '0d5f']) {
      for (const s of VISIT_STATUSES) {
        const next = stepOf(id, s);
        if (next === 'canceled') expect(reached(s, 'booked')).toBe(false);
        else if (next === 'exam_not_completed') expect(s).toBe('booked');
        else if (s !== 'canceled' && s !== 'exam_not_completed')
          expect(visitRank(next)).toBeGreaterThanOrEqual(visitRank(s));
      }
    }
  });

  it('mock --advance-every 30d (longer than a Node timer holds) does not advance every 1 ms', async () => {
    const referrals = new ReferralStore(1, 20, buildReferenceData(1));
    const state = { referrals, webhooks: { configured: false } } as unknown as EmulatorState;
    const statuses = () =>
      JSON.stringify(Array.from({ length: referrals.total }, (_, i) => referrals.at(i).visits));
    const before = statuses();
    const stop = startAdvancing(state, 30 * 86_400_000);
    try {
      await new Promise((r) => setTimeout(r, 150));
      expect(statuses()).toBe(before);
    } finally {
      stop();
    }
  });
});
