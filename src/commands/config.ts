import { normaliseBaseUrl } from '../api/url.js';
import { ENVIRONMENTS, type EnvironmentName, parseEnvironment } from '../config/environments.js';
import { maskToken, originOf, storedTokenOrigin } from '../config/store.js';
import type { Context } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { renderList } from '../output/render.js';

const KEYS = ['env', 'base-url'] as const;
type Key = (typeof KEYS)[number];

function parseKey(key: string): Key {
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
    `Known keys: ${KEYS.join(', ')} (base-url is per environment: --env).`,
  );
}

interface Row {
  key: string;
  environment: string;
  value: string;
}

export async function list(ctx: Context): Promise<number> {
  const stored = ctx.config.read();
  const rows: Row[] = [{ key: 'env', environment: '', value: stored.env ?? '' }];
  for (const env of ENVIRONMENTS) {
    const s = stored.environments?.[env];
    if (s?.base_url) rows.push({ key: 'base-url', environment: env, value: s.base_url });
    if (s?.token) rows.push({ key: 'token', environment: env, value: maskToken(s.token) });
    if (s?.token && s.token_origin)
      rows.push({ key: 'token-origin', environment: env, value: s.token_origin });
  }
  const format = ctx.format('table');
  const shown = rows.filter((r) => r.value !== '');
  await renderList(ctx, shown, {
    format,
    columns: [
      { header: 'Key', get: (r) => r.key },
      { header: 'Environment', get: (r) => r.environment || '(all)' },
      { header: 'Value', get: (r) => r.value },
    ],
    emptyHint: `Nothing is stored yet (${ctx.config.path}).`,
  });
  return 0;
}

export async function get(ctx: Context, key: string): Promise<number> {
  const k = parseKey(key);
  const value =
    k === 'env' ? ctx.config.read().env : ctx.config.environment(ctx.environment().value).base_url;
  if (!value) {
    throw new CliError(
      k === 'env'
        ? 'env is not set (the default is sandbox)'
        : `base-url is not set for ${ctx.environment().value}`,
    );
  }
  ctx.io.stdout.write(`${value}\n`);
  return 0;
}

export async function set(ctx: Context, key: string, value: string): Promise<number> {
  const k = parseKey(key);
  if (k === 'env') {
    const env = parseEnvironment(value, 'env');
    await ctx.config.update((c) => {
      c.env = env;
    });
    ctx.note(`Default environment set to ${env}.`);
    return 0;
  }
  const env: EnvironmentName = ctx.environment().value;
  const url = normaliseBaseUrl(value, 'base-url');
  const before = ctx.config.environment(env);
  // A token stored by an older version is bound to the base URL it was used with, before that
  // changes; with no base URL stored, to the one the user types now (on purpose, and said so).
  let bound = before.token ? storedTokenOrigin(before) : undefined;
  let newlyBound = false;
  if (before.token && !bound) {
    bound = oldBaseOrigin(before.base_url) ?? originOf(url);
    newlyBound = true;
  }
  await ctx.config.update((c) => {
    c.environments ??= {};
    const settings = (c.environments[env] ??= {});
    settings.base_url = url;
    if (bound) settings.token_origin = bound;
  });
  ctx.note(`base-url for ${env} set to ${url}.`);
  if (newlyBound)
    ctx.note(
      `Note: the stored ${env} token had no origin recorded (a config from an older version); it is now bound to ${bound} and will be sent only there.`,
    );
  if (bound && bound !== originOf(url)) {
    ctx.note(
      `Note: the stored ${env} token belongs to ${bound} and will not be sent to ${originOf(url)}. Log in for the new base URL: imaging auth login${env === 'sandbox' ? '' : ` --env ${env}`}`,
    );
  }
  if (url.startsWith('http://') && !/^http:\/\/(127\.|localhost|\[::1\])/.test(url)) {
    ctx.note('Warning: plain http. The token will not be sent to this host; use https.');
  }
  return 0;
}

export async function unset(ctx: Context, key: string): Promise<number> {
  const k = parseKey(key);
  const env = ctx.environment().value;
  // The stored base URL is the only record of where an old, unbound token belongs: bind the token
  // to it first, so that no base URL given later (IMAGING_BASE_URL) can capture it.
  const before = ctx.config.environment(env);
  const bind =
    k === 'base-url' && before.token && !storedTokenOrigin(before)
      ? oldBaseOrigin(before.base_url)
      : undefined;
  await ctx.config.update((c) => {
    if (k === 'env') delete c.env;
    else if (c.environments?.[env]) {
      delete c.environments[env].base_url;
      if (bind) c.environments[env].token_origin = bind;
    }
  });
  ctx.note(k === 'env' ? 'Default environment unset (sandbox).' : `base-url for ${env} unset.`);
  if (bind)
    ctx.note(
      `Note: the stored ${env} token had no origin recorded (a config from an older version); it stays bound to ${bind} and will be sent only there.`,
    );
  return 0;
}

/** The origin of a stored base URL, or undefined when there is none (or it is no URL). */
function oldBaseOrigin(baseUrl: string | undefined): string | undefined {
  if (!baseUrl) return undefined;
  try {
    return originOf(normaliseBaseUrl(baseUrl));
  } catch {
    return undefined;
  }
}

export async function path(ctx: Context): Promise<number> {
  ctx.io.stdout.write(`${ctx.config.path}\n`);
  return 0;
}
