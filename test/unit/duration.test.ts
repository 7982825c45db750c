import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/cli/duration.js';
import { UsageError } from '../../src/errors.js';

describe('durations as people write them', () => {
  it('reads a whole number and a unit, or several largest first, in any case', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('24h')).toBe(86_400_000);
    expect(parseDuration('2d')).toBe(172_800_000);
    expect(parseDuration(' 1H 30m ')).toBe(5_400_000);
    expect(parseDuration('0s')).toBe(0);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('1s 250MS')).toBe(1250);
  });

  it('refuses anything else with a usage error that names the flag', () => {
    for (const bad of ['', '60', '1.5h', '-5m', '90x', 'm', '30m1h', '1h1h', '5 minutes', '500ms1s', 'ms']) {
      expect(() => parseDuration(bad, '--within'), bad).toThrow(UsageError);
    }
    expect(() => parseDuration('60', '--interval')).toThrow(/--interval: "60" is not a duration/);
    try {
      parseDuration('60', '--interval');
    } catch (err) {
      expect((err as UsageError).hint).toMatch(/60s/);
    }
    expect(() => parseDuration('400d', '--within')).toThrow(/too long/);
  });

  it('prints a duration back with the largest units that fit', () => {
    expect(formatDuration(90_000)).toBe('1m 30s');
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(86_400_000)).toBe('1d');
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(3_661_000)).toBe('1h 1m 1s');
  });
});
