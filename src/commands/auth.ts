import { tokenHeaderProblem } from '../api/client.js';
import { normaliseBaseUrl } from '../api/url.js';
import { defaultBaseUrl, ENVIRONMENTS, type EnvironmentName } from '../config/environments.js';
import { maskToken, originOf, storedTokenOrigin } from '../config/store.js';
import type { Context, GlobalOptions } from '../context.js';
import { ApiError, AuthError, CliError, ExitCode, exitCodeOf, UsageError } from '../errors.js';
import { renderList } from '../output/render.js';
import { readAll } from '../util/stdin.js';

export interface LoginOpts extends GlobalOptions {
  withToken?: boolean;
  verify?: boolean;
}

/** The cheap request used to check a token: the smallest reference list. */
const CHECK_PATH = '/modalities';

export async function login(ctx: Context, opts: LoginOpts): Promise<number> {
  const env = ctx.environment().value;
  const baseUrl = opts.baseUrl ? normaliseBaseUrl(opts.baseUrl, '--base-url') : ctx.baseUrl(env).value;
  if (!baseUrl) {
    throw new UsageError(
      `no base URL is set for the ${env} environment`,
      `Give it once: imaging auth login --env ${env} --base-url https://…`,
    );
  }
  // A base URL from the environment (a .envrc, a CI variable) is not enough to send a new token
  // to another origin than the one stored for this environment: the user names it with --base-url.
  const storedBase = ctx.config.environment(env).base_url;
  if (!opts.baseUrl && storedBase && ctx.env.IMAGING_BASE_URL) {
    const stored = normaliseBaseUrl(storedBase, `config base-url (${env})`);
    if (originOf(stored) !== originOf(baseUrl)) {
      throw new UsageError(
        `IMAGING_BASE_URL (${baseUrl}) is another origin than the stored base-url of ${env} (${stored}); the token is not sent until you say which`,
        `For that server: imaging auth login${env === 'sandbox' ? '' : ` --env ${env}`} --base-url ${baseUrl}; for the stored one, unset IMAGING_BASE_URL.`,
      );
    }
  }
  let token: string;
  if (opts.withToken) {
    if (ctx.io.stdinIsTTY) ctx.note('Paste the token, then press Ctrl-D:');
    token = (await readAll(ctx.io.stdin, 64 * 1024, 'the token', ctx.signal)).toString('utf8').trim();
  } else {
    if (!ctx.io.stdinIsTTY) {
      throw new UsageError(
        'standard input is not a terminal, so there is no one to ask for the token',
        'Pipe it in instead: imaging auth login --with-token < token.txt',
      );
    }
    const prompter = await ctx.prompter();
    token = (await prompter.secret(`API token for ${env} (${baseUrl}):`)).trim();
  }
  if (token === '') throw new UsageError('the token is empty');
  const problem = tokenHeaderProblem(token);
  if (problem)
    throw new AuthError(
      `this token cannot be sent: ${problem}; it was not stored`,
      'Copy it again from where it was issued.',
    );
  if (/\s/.test(token)) throw new UsageError('the token contains white space; check what was pasted');

  if (opts.verify !== false) {
    const client = ctx.buildClient(baseUrl, token);
    try {
      await client.request({ path: CHECK_PATH });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        throw new CliError(
          `the ${env} API refused this token (${err.code ?? 'unauthorized'}); it was not stored`,
          ExitCode.auth,
          err.code === 'api_token_expired'
            ? 'The sandbox token has expired: request an extension or a new one.'
            : 'Check that the token is for this environment (a sandbox token fails on production).',
        );
      }
      if (err instanceof CliError) {
        throw new CliError(
          `could not verify the token: ${err.message}; it was not stored`,
          exitCodeOf(err),
          'Check the base URL, or store it without checking: --no-verify',
        );
      }
      throw err;
    } finally {
      client.close();
    }
  }

  await ctx.config.update((c) => {
    c.environments ??= {};
    const settings = (c.environments[env] ??= {});
    settings.token = token;
    // The token is bound to the origin it was given for, and is sent nowhere else.
    settings.token_origin = originOf(baseUrl);
    if (opts.baseUrl) settings.base_url = baseUrl;
  });
  ctx.note(
    `Logged in to ${env} (${baseUrl}) with token ${maskToken(token)}${opts.verify === false ? ' (not verified)' : ''}; it is sent only to ${originOf(baseUrl)}.`,
  );
  if (ctx.env.IMAGING_TOKEN)
    ctx.note('Note: IMAGING_TOKEN is set in this shell and wins over the stored token.');
  return 0;
}

interface StatusRow {
  environment: EnvironmentName;
  active: boolean;
  base_url: string | null;
  base_url_source: string;
  token_source: string;
  token: string | null;
  /** Where the stored token may be sent; null for IMAGING_TOKEN and the emulator's default (anywhere). */
  token_origin: string | null;
  /** False when the token is bound to another origin than the base URL, so it is not sent. */
  token_usable: boolean;
  check?: string;
  check_code?: number;
}

export async function status(ctx: Context, opts: GlobalOptions & { check?: boolean }): Promise<number> {
  const active = ctx.environment();
  const envs: EnvironmentName[] = opts.env ? [active.value] : [...ENVIRONMENTS];
  const rows: StatusRow[] = [];
  for (const env of envs) {
    const isActive = env === active.value;
    // --base-url and IMAGING_BASE_URL apply to the active environment only.
    const base = isActive ? ctx.baseUrl(env) : storedOrDefault(ctx, env);
    const tok = ctx.token(env);
    const stored = ctx.config.environment(env);
    // Compared as an origin, exactly as requests compare it (a hand-edited "HTTP://127.1:4451/").
    let origin = tok.source === 'config' ? (storedTokenOrigin(stored) ?? null) : null;
    let usable = true;
    // --check sends the token: an old unbound one is bound first, as any request-making command
    // does, and not at all when the base URL in use may not bind it.
    if (!origin && opts.check && tok.source === 'config' && base.value) {
      try {
        origin = ctx.tokenOrigin(env, normaliseBaseUrl(base.value));
      } catch (err) {
        if (!(err instanceof AuthError)) throw err;
        usable = false;
      }
    }
    if (origin && base.value) {
      try {
        usable = originOf(base.value) === origin;
      } catch {
        usable = false;
      }
    }
    rows.push({
      environment: env,
      active: isActive,
      base_url: base.value ?? null,
      base_url_source: base.source,
      token_source: tok.source,
      token: tok.value ? maskToken(tok.value) : null,
      token_origin: origin,
      token_usable: usable,
    });
  }
  let exitCode = 0;
  if (opts.check) {
    for (const row of rows) {
      const env = row.environment;
      const token = ctx.token(env).value;
      if (!row.base_url || !token) {
        row.check = row.base_url ? 'no token' : 'no base URL';
        continue;
      }
      if (!row.token_usable) {
        row.check = row.token_origin
          ? 'not sent: the token belongs to another origin'
          : 'not sent: the token has no origin yet (imaging config set base-url URL binds it)';
        row.check_code = ExitCode.auth;
        if (exitCode === 0 || row.active) exitCode = ExitCode.auth;
        continue;
      }
      const client = ctx.buildClient(row.base_url, token);
      try {
        await client.request({ path: CHECK_PATH, retry: false });
        row.check = 'ok';
      } catch (err) {
        row.check =
          err instanceof ApiError ? `${err.status} ${err.code ?? ''}`.trim() : (err as Error).message;
        row.check_code = exitCodeOf(err);
        if (exitCode === 0 || row.active) exitCode = row.check_code;
      } finally {
        client.close();
      }
    }
  }
  const format = ctx.format('table');
  await renderList(ctx, rows, {
    format,
    columns: [
      { header: '', get: (r) => (r.active ? '*' : ' ') },
      { header: 'Environment', get: (r) => r.environment },
      { header: 'Base URL', get: (r) => (r.base_url ? `${r.base_url} (${r.base_url_source})` : 'not set') },
      { header: 'Token', get: (r) => (r.token ? `${r.token} (${r.token_source})` : 'not logged in') },
      { header: 'Token origin', get: tokenOriginCell },
      ...(opts.check ? [{ header: 'Check', get: (r: StatusRow) => r.check ?? '' }] : []),
    ],
  });
  if (format === 'table')
    ctx.note(`* active environment (${active.source === 'default' ? 'default' : `from ${active.source}`})`);
  return exitCode;
}

function tokenOriginCell(r: StatusRow): string {
  if (!r.token) return '-';
  if (r.token_source !== 'config') return 'any (not stored)';
  if (!r.token_origin)
    return r.token_usable
      ? 'not bound yet (bound on first use to the stored or default base URL)'
      : 'not bound yet: not sent (imaging config set base-url URL binds it)';
  return r.token_usable ? r.token_origin : `${r.token_origin} (not this base URL: not sent)`;
}

function storedOrDefault(ctx: Context, env: EnvironmentName): { value: string | undefined; source: string } {
  const stored = ctx.config.environment(env).base_url;
  if (stored) return { value: stored, source: 'config' };
  const def = defaultBaseUrl(env);
  return def ? { value: def, source: 'default' } : { value: undefined, source: 'none' };
}

export async function logout(ctx: Context): Promise<number> {
  const env = ctx.environment().value;
  const had = Boolean(ctx.config.environment(env).token);
  if (had) {
    await ctx.config.update((c) => {
      const settings = c.environments?.[env];
      if (settings) {
        delete settings.token;
        delete settings.token_origin;
      }
    });
    ctx.note(`Logged out of ${env}: the stored token was removed.`);
  } else {
    ctx.note(`No token is stored for ${env}; nothing to do.`);
  }
  if (ctx.env.IMAGING_TOKEN) ctx.note('Note: IMAGING_TOKEN is still set in this shell and is still used.');
  return 0;
}
