import { describe, expect, it } from 'vitest';
import { peopleTime } from '../../src/util/time.js';

describe('the one time format for people', () => {
  it('is the date, the time and the zone, in the zone asked for', () => {
    expect(peopleTime('2026-01-07T17:00:05Z', { timeZone: 'America/Los_Angeles' })).toBe(
      '2026-01-07 09:00 PST',
    );
    expect(peopleTime('2026-07-07T17:00:05Z', { timeZone: 'America/Los_Angeles' })).toBe(
      '2026-07-07 10:00 PDT',
    );
    expect(peopleTime('2026-01-07T00:30:05Z', { timeZone: 'UTC', seconds: true })).toBe(
      '2026-01-07 00:30:05 UTC',
    );
  });

  it('keeps text that is no time as it is, shows nothing as -, and survives an unknown zone', () => {
    expect(peopleTime('soon')).toBe('soon');
    expect(peopleTime(undefined)).toBe('-');
    expect(peopleTime('2026-01-07T17:00:05Z', { timeZone: 'Not/AZone' })).toMatch(
      /^2026-01-0[78] \d\d:\d\d \S+$/,
    );
  });
});
