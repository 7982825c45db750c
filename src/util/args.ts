import { InvalidArgumentError } from 'commander';
import { UsageError } from '../errors.js';

/** Parsers for commander options: bad values become usage errors (exit 2) before any request. */
export function positiveInt(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const v = value.trim();
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${name} must be a whole number, not "${value}".`);
    const n = Number(v);
    if (n < 1 || n > max)
      throw new InvalidArgumentError(`${name} must be between 1 and ${max}, not ${value}.`);
    return n;
  };
}

export function portNumber(value: string): number {
  const v = value.trim();
  if (!/^\d+$/.test(v) || Number(v) > 65535)
    throw new InvalidArgumentError(`must be a port from 0 to 65535, not "${value}".`);
  return Number(v);
}

/** Collects a repeatable option into an array. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function keyValue(
  value: string,
  previous: Array<[string, string]> | undefined,
): Array<[string, string]> {
  const i = value.indexOf('=');
  if (i <= 0) throw new InvalidArgumentError(`expected KEY=VALUE, not "${value}".`);
  return [...(previous ?? []), [value.slice(0, i), value.slice(i + 1)]];
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

/** An http(s) URL given to a flag (webhook targets, forwarding, curl), or a usage error. */
export function requireHttpUrl(flag: string, value: string): URL {
  let u: URL | undefined;
  try {
    u = new URL(value);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    throw new UsageError(`${flag} needs an http(s) URL, not "${value}"`);
  }
  return u;
}
