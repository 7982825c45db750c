import { OPERATION_NAMES, type Operation } from '../../api/endpoints/operations.js';
import { normaliseBaseUrl } from '../../api/url.js';
import { originOf } from '../../config/store.js';
import { UsageError } from '../../errors.js';

export const PATH_KEYS = OPERATION_NAMES.map((op) => `path.${op}` as const);
export const KEYS = ['env', 'base-url', ...PATH_KEYS] as const;
export type Key = 'env' | 'base-url' | `path.${Operation}`;

/** What `<key>` says it takes, in help. */
export const KEY_HELP = 'env, base-url or path.<operation> (path.payments, path.auto_book, …)';

export function parseKey(key: string): Key {
  // path.auto_book and path.auto-book are one key; base_url and base-url too.
  const given = key.trim().toLowerCase();
  const k = given.startsWith('path.') ? given.replace(/-/g, '_') : given.replace(/_/g, '-');
  if (k === 'token' || k === 'api-token') {
    throw new UsageError(
      'the token is not a config value: it would stay in your shell history',
      'Store it with: imaging auth login (or imaging auth login --with-token < file)',
    );
  }
  if ((KEYS as readonly string[]).includes(k)) return k as Key;
  throw new UsageError(
    `unknown config key "${key}"`,
    `Known keys: ${KEYS.join(', ')} (all but env are per environment: --env).`,
  );
}

/** `path.auto_book` -> `auto_book`: the operations the API does not publish, per environment. */
export const pathKind = (k: Key): Operation | undefined =>
  k.startsWith('path.') ? (k.slice('path.'.length) as Operation) : undefined;

export interface Row {
  key: string;
  environment: string;
  value: string;
}

/** The origin of a stored base URL, or undefined when there is none (or it is no URL). */
export function oldBaseOrigin(baseUrl: string | undefined): string | undefined {
  if (!baseUrl) return undefined;
  try {
    return originOf(normaliseBaseUrl(baseUrl));
  } catch {
    return undefined;
  }
}
