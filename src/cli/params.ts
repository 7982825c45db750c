import type { Query } from '../api/url.js';
import { UsageError } from '../errors.js';
import { normaliseUuids } from './args.js';
import { pairs } from './options.js';

export type Params = Array<[string, string]>;

export const PARAM_OPTION = pairs(
  '--param <key=value>',
  'extra query parameter, passed through as is (UUIDs, one or a comma list, in lower case; repeatable)',
);

/** --param KEY=VALUE pairs, passed through unchanged (the list filters are not published). */
export function paramsQuery(params: Params | undefined): Query {
  // No prototype: a --param named "__proto__" is a query key like any other.
  const q = Object.create(null) as Record<string, string | string[]>;
  for (const [k, given] of params ?? []) {
    // UUIDs (or a comma list of them) go in lower case, as the API stores ids.
    const v = normaliseUuids(given);
    if (k === 'page' || k === 'per_page') throw new UsageError(`--param ${k}: use --page / --per-page`);
    const prev = q[k];
    if (k.endsWith('[]')) q[k] = [...(Array.isArray(prev) ? prev : prev !== undefined ? [prev] : []), v];
    else q[k] = v;
  }
  return q;
}
