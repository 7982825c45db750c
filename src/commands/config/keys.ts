import { normaliseBaseUrl } from '../../api/url.js';
import { originOf } from '../../config/store.js';
import { UsageError } from '../../errors.js';

export const KEYS = ['env', 'base-url', 'path.payments', 'path.notifications'] as const;
export type Key = (typeof KEYS)[number];

export function parseKey(key: string): Key {
  const k = key.trim().toLowerCase().replace(/_/g, '-');
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

/** `path.payments` -> `payments`: the paths the API does not publish, per environment. */
export const pathKind = (k: Key) =>
  k === 'path.payments' ? 'payments' : k === 'path.notifications' ? 'notifications' : undefined;

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
