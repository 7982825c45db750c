import { UsageError } from '../errors.js';
import { type OptionSpec, OptionValueError } from './options.js';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

// The longest a duration may be: a year is far beyond any wait, and keeps timers well inside setTimeout's range
// once they are split.
const MAX_MS = 366 * UNIT_MS.d;

/**
 * A duration as people write it, in milliseconds: a whole number and a unit (ms, s, m, h or d), or
 * several of them, largest first (`1h30m`). Any case, spaces allowed around and between the parts. Anything
 * else (`60` without a unit, `1.5h`, `-5m`, `90x`) is a usage error naming `flag`.
 */
export function parseDuration(value: string, flag = 'duration'): number {
  const text = value.trim().toLowerCase();
  const parts = [...text.matchAll(/(\d+)\s*(ms|[smhd])\s*/g)];
  const whole = parts.map((p) => p[0]).join('');
  const order = parts.map((p) => Object.keys(UNIT_MS).indexOf(p[2] as Unit));
  const descending = order.every((o, i) => i === 0 || o < (order[i - 1] as number));
  if (text === '' || whole !== text || !descending) {
    const bare = /^\d+$/.test(text);
    throw new UsageError(
      `${flag}: "${value.trim()}" is not a duration`,
      bare
        ? `Add a unit: ${text}s, ${text}m, ${text}h or ${text}d.`
        : 'Write a whole number and a unit: 90s, 15m, 24h, 2d (or 1h30m).',
    );
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_MS[p[2] as Unit], 0);
  if (!Number.isSafeInteger(ms) || ms > MAX_MS)
    throw new UsageError(`${flag}: ${value.trim()} is too long (at most 366d)`);
  return ms;
}

/** A duration for people, the largest units that fit: `1m 30s`, `24h`, `2d 1h`, `0s`. */
export function formatDuration(ms: number): string {
  // Under a second (a --timeout, an --interval given in ms): rounding to seconds would misstate it.
  if (ms > 0 && ms < 1000) return `${Math.round(ms)}ms`;
  let left = Math.max(0, Math.round(ms / 1000)) * 1000;
  const out: string[] = [];
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const n = Math.floor(left / UNIT_MS[unit]);
    if (n > 0) out.push(`${n}${unit}`);
    left -= n * UNIT_MS[unit];
  }
  return out.length > 0 ? out.join(' ') : '0s';
}

/**
 * An option that takes a duration (`--within <duration>`): its value is in milliseconds. Over `max`, the
 * value is refused as typed (it is a duration, never other text), with `hint`.
 */
export function duration(
  flags: string,
  description: string,
  max?: { ms: number; said: string; hint: string },
): OptionSpec<number, false> {
  const name = flags.match(/--[\w-]+/)?.[0] ?? flags;
  const parse = (value: string) => {
    const ms = parseDuration(value, name);
    if (max && ms > max.ms)
      throw new UsageError(`${name}: ${value.trim()} is too long (at most ${max.said})`, max.hint);
    return ms;
  };
  return { kind: 'text', flags, description, parse };
}

/**
 * An option in milliseconds: a bare whole number as always (30000), or a duration as the other options
 * take it (a whole number and a unit), between `min` and `max` milliseconds.
 */
export function millis(
  flags: string,
  description: string,
  range: { min: number; max: number },
): OptionSpec<number, false> {
  const name = flags.match(/--[\w-]+/)?.[0] ?? flags;
  // The messages never repeat the value: a parser error never echoes what it refuses (a pasted secret).
  return {
    kind: 'text',
    flags,
    description,
    parse: (value) => {
      let n: number;
      if (/^\s*\d+\s*$/.test(value)) n = Number(value.trim());
      else
        try {
          n = parseDuration(value, name);
        } catch {
          throw new OptionValueError(
            `${name} must be whole milliseconds (30000) or a whole number with a unit (500ms, 5s, 2m).`,
          );
        }
      if (n < range.min || n > range.max)
        throw new OptionValueError(
          `${name} must be between ${formatDuration(range.min)} and ${formatDuration(range.max)}.`,
        );
      return n;
    },
  };
}
