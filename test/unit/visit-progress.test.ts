import { describe, expect, it } from 'vitest';
import { VISIT_STATUSES } from '../../src/api/types.js';
import { UsageError } from '../../src/errors.js';
import {
  PROGRESS,
  parseStatusList,
  parseVisitStatuses,
  reached,
  standing,
  visitRank,
} from '../../src/referrals/progress.js';

const visits = (...statuses: string[]) => statuses.map((status) => ({ status }));

describe('the visit-status progress rule', () => {
  it('is the spec list without exam_not_completed and canceled, in order', () => {
    expect(PROGRESS).toEqual(VISIT_STATUSES.filter((s) => s !== 'exam_not_completed' && s !== 'canceled'));
    expect(PROGRESS[0]).toBe('pending');
    expect(PROGRESS.at(-1)).toBe('sent_to_rp');
  });

  it('a visit has reached a status when it is at it or later', () => {
    expect(reached('booked', 'booked')).toBe(true);
    expect(reached('report_uploaded', 'booked')).toBe(true);
    expect(reached('sent_to_rp', 'report_uploaded')).toBe(true);
    expect(reached('complete', 'report_uploaded')).toBe(false);
    expect(reached('Report_Uploaded', 'REPORT_UPLOADED')).toBe(true);
  });

  it('exam_not_completed has reached booked and earlier, never complete or later', () => {
    expect(reached('exam_not_completed', 'booked')).toBe(true);
    expect(reached('exam_not_completed', 'pending')).toBe(true);
    expect(reached('exam_not_completed', 'complete')).toBe(false);
    expect(reached('exam_not_completed', 'report_uploaded')).toBe(false);
    expect(reached('exam_not_completed', 'exam_not_completed')).toBe(true);
  });

  it('canceled and unknown statuses have reached only themselves', () => {
    expect(reached('canceled', 'pending')).toBe(false);
    expect(reached('canceled', 'canceled')).toBe(true);
    expect(reached('awaiting_review', 'pending')).toBe(false);
    expect(reached('awaiting_review', 'awaiting_review')).toBe(true);
    expect(reached('sent_to_rp', 'awaiting_review')).toBe(false);
  });

  it('ranks exam_not_completed between booked and complete, canceled below all progress', () => {
    const order = [...VISIT_STATUSES, 'awaiting_review'].sort((a, b) => visitRank(a) - visitRank(b));
    expect(order.slice(0, 3)).toEqual(['canceled', 'awaiting_review', 'pending']);
    expect(order.indexOf('exam_not_completed')).toBe(order.indexOf('booked') + 1);
    expect(order.indexOf('complete')).toBe(order.indexOf('exam_not_completed') + 1);
    expect(order.at(-1)).toBe('sent_to_rp');
    expect(visitRank(null)).toBeLessThan(visitRank('canceled'));
  });
});

describe("a referral's standing", () => {
  const until = ['report_uploaded'];
  it('is done when each visit has reached one of the statuses', () => {
    expect(standing(visits('report_uploaded', 'sent_to_rp'), until)).toBe('done');
    expect(standing(visits('booked', 'report_uploaded'), until)).toBe('waiting');
    expect(standing(visits('booked', 'complete'), ['booked', 'report_uploaded'])).toBe('done');
  });

  it('leaves canceled visits out unless all are canceled', () => {
    expect(standing(visits('canceled', 'report_uploaded'), until)).toBe('done');
    expect(standing(visits('canceled', 'canceled'), until)).toBe('cannot');
    expect(standing(visits('canceled'), ['canceled'])).toBe('done');
  });

  it('cannot get there when a visit stopped at exam_not_completed before the awaited status', () => {
    expect(standing(visits('exam_not_completed', 'booked'), until)).toBe('cannot');
    expect(standing(visits('exam_not_completed'), ['booked'])).toBe('done');
  });

  it('waits on a referral without visits and on a status newer than the tool', () => {
    expect(standing([], until)).toBe('waiting');
    expect(standing(visits('awaiting_review'), until)).toBe('waiting');
    expect(standing(visits('awaiting_review'), ['awaiting_review'])).toBe('done');
  });
});

describe('status lists as typed (--until, --visit-status)', () => {
  it('takes any case, - or space for _, and +NAME for a newer status', () => {
    const set = parseStatusList('BOOKED, Ready-To-Book,+Awaiting_Review', '--until');
    expect([...set]).toEqual(['booked', 'ready_to_book', 'awaiting_review']);
    expect(set.has('Booked')).toBe(true);
  });

  it('names the flag, suggests the nearest status, and refuses an empty list', () => {
    expect(() => parseStatusList('boked', '--until')).toThrow(
      '--until: unknown visit status "boked"; did you mean "booked"?',
    );
    try {
      parseStatusList('xyzzy', '--until');
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).message).not.toMatch(/did you mean/);
      expect((err as UsageError).hint).toMatch(/\(--until \+xyzzy\)/);
    }
    expect(() => parseStatusList(' , ', '--until')).toThrow('--until needs at least one status');
    expect(() => parseStatusList('+', '--until')).toThrow('--until: "+" needs a status after it');
    expect(() => parseVisitStatuses('boked')).toThrow(/^--visit-status: unknown/);
  });
});
