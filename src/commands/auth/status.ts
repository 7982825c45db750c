import { MODALITIES_PATH } from '../../api/endpoints/reference.js';
import { normaliseBaseUrl } from '../../api/url.js';
import { defineCommand } from '../../cli/define.js';
import { flag } from '../../cli/options.js';
import { defaultBaseUrl, ENVIRONMENTS, type EnvironmentName } from '../../config/environments.js';
import { maskToken, originOf, storedTokenOrigin } from '../../config/store.js';
import type { Context } from '../../context.js';
import { ApiError, AuthError, ExitCode, exitCodeOf } from '../../errors.js';
import { type AllowanceView, allowanceOf, describeView } from '../../meter/meter.js';
import { type Column, write } from '../../output/write.js';

interface StatusRow {
  environment: EnvironmentName;
  active: boolean;
  base_url: string | null;
  base_url_source: string;
  token_source: string;
  /** Where a stored token lives: `keychain` (the OS credential store) or `file` (the config file). */
  token_store: 'keychain' | 'file' | null;
  token: string | null;
  /** Where the stored token may be sent; null for IMAGING_TOKEN and the emulator's default (anywhere). */
  token_origin: string | null;
  /** False when the token is bound to another origin than the base URL, so it is not sent. */
  token_usable: boolean;
  check?: string;
  check_code?: number;
  /** The sandbox allowance meter's view of the sandbox token; null elsewhere and without a token. */
  allowance: AllowanceView | null;
}

export default defineCommand({
  path: ['auth', 'status'],
  csv: true,
  options: {
    check: flag('--check', 'make one request per environment to check the token'),
  },
  async run(ctx, _args, opts) {
    const active = ctx.environment();
    const envs: EnvironmentName[] = ctx.globals.env ? [active.value] : [...ENVIRONMENTS];
    const rows = envs.map((env) => statusRow(ctx, env, env === active.value, opts.check === true));
    let exitCode = 0;
    if (opts.check) {
      for (const row of rows) {
        const code = await checkRow(ctx, row);
        if (code !== undefined && (exitCode === 0 || row.active)) exitCode = code;
      }
    }
    ctx.flushMeters();
    for (const row of rows)
      if (row.environment === 'sandbox')
        row.allowance = allowanceOf(ctx, row.base_url ?? undefined, ctx.token('sandbox').value);
    const format = ctx.format('table');
    await write(rows, { sink: ctx.sink(), format, columns: statusColumns(opts.check === true) });
    if (format === 'table') {
      ctx.note(`* active environment (${active.source === 'default' ? 'default' : `from ${active.source}`})`);
      const sandbox = rows.find((r) => r.environment === 'sandbox')?.allowance;
      if (sandbox) ctx.out.line(`Sandbox allowance: ${describeView(sandbox, ctx.now().getTime())}`);
    }
    return exitCode;
  },
});

/** One environment's row: its base URL and token, and whether the token may go there. */
function statusRow(ctx: Context, env: EnvironmentName, isActive: boolean, check: boolean): StatusRow {
  // --base-url and IMAGING_BASE_URL apply to the active environment only.
  const base = isActive ? ctx.baseUrl(env) : storedOrDefault(ctx, env);
  let tok: { value: string | undefined; source: string };
  try {
    tok = ctx.token(env);
  } catch (err) {
    // A keychain that cannot be read: the row says so, the other environments still show.
    if (!(err instanceof AuthError)) throw err;
    tok = { value: undefined, source: `keychain: ${err.message}` };
  }
  const where = ctx.config.tokenStore(env) ?? null;
  const stored = ctx.config.environment(env);
  // Compared as an origin, exactly as requests compare it (a hand-edited "HTTP://127.1:4451/").
  let origin = tok.source === 'config' ? (storedTokenOrigin(stored) ?? null) : null;
  let usable = true;
  // --check sends the token: an old unbound one is bound first, as any request binds it.
  if (!origin && check && tok.source === 'config' && base.value) {
    const url = normaliseBaseUrl(base.value);
    usable = !refused(() => {
      origin = ctx.tokenOrigin(env, url);
    });
  }
  // A real IMAGING_TOKEN is not sent to a loopback port this run did not name (see Context).
  if (tok.source === 'IMAGING_TOKEN' && base.value) {
    const url = normaliseBaseUrl(base.value);
    if (refused(() => ctx.sendableToken(env, url))) usable = false;
  }
  if (origin && base.value) {
    try {
      usable = originOf(base.value) === origin;
    } catch {
      usable = false;
    }
  }
  return {
    environment: env,
    active: isActive,
    base_url: base.value ?? null,
    base_url_source: base.source,
    token_source: tok.source,
    token_store: tok.source === 'config' ? where : null,
    token: tok.value ? maskToken(tok.value) : null,
    token_origin: origin,
    token_usable: usable,
    allowance: null,
  };
}

/** Whether `send` refused the token (an AuthError); any other error is thrown. */
function refused(send: () => unknown): boolean {
  try {
    send();
    return false;
  } catch (err) {
    if (!(err instanceof AuthError)) throw err;
    return true;
  }
}

/** --check: one request with the token the row would send; the row's exit code when it fails. */
async function checkRow(ctx: Context, row: StatusRow): Promise<number | undefined> {
  const env = row.environment;
  const notSent = (why: string) => {
    row.check = `not sent: ${why}`;
    row.check_code = ExitCode.auth;
    return ExitCode.auth;
  };
  if (row.token_source.startsWith('keychain:')) return notSent('the keychain could not be read');
  if (!row.base_url || !row.token) {
    row.check = row.base_url ? 'no token' : 'no base URL';
    return undefined;
  }
  if (!row.token_usable && row.token_source === 'config')
    return notSent(
      row.token_origin
        ? 'the token belongs to another origin'
        : 'the token has no origin yet (imaging config set base-url URL binds it)',
    );
  // Only the token that belongs to this environment and may go to this base URL is sent.
  let sendable: string;
  try {
    sendable = ctx.sendableToken(env, normaliseBaseUrl(row.base_url));
  } catch (err) {
    if (!(err instanceof AuthError)) throw err;
    return notSent(err.message);
  }
  const client = ctx.buildClient(row.base_url, sendable, env);
  try {
    await client.request({ path: MODALITIES_PATH, retry: false });
    row.check = 'ok';
  } catch (err) {
    row.check = err instanceof ApiError ? `${err.status} ${err.code ?? ''}`.trim() : (err as Error).message;
    row.check_code = exitCodeOf(err);
    return row.check_code;
  } finally {
    client.close();
  }
  return undefined;
}

// URLs and origins are never broken (they are copied); at a narrow terminal the token origin goes first.
function statusColumns(check: boolean): Column<StatusRow>[] {
  return [
    { header: '', get: (r) => (r.active ? '*' : ' '), priority: 1, fit: 'keep' },
    { header: 'Environment', get: (r) => r.environment, priority: 2, fit: 'keep' },
    {
      header: 'Base URL',
      get: (r) => (r.base_url ? `${r.base_url} (${r.base_url_source})` : 'not set'),
      priority: 3,
      fit: 'keep',
    },
    {
      header: 'Token',
      get: (r) =>
        r.token
          ? `${r.token} (${r.token_store === 'keychain' ? 'keychain' : r.token_source})`
          : r.token_source.startsWith('keychain:')
            ? r.token_source
            : 'not logged in',
      priority: 4,
      min: 16,
    },
    { header: 'Token origin', get: tokenOriginCell, priority: 6, fit: 'keep' },
    // With --check, its result is what the person came for: kept before the base URL.
    ...(check ? [{ header: 'Check', get: (r: StatusRow) => r.check ?? '', priority: 2.5, min: 12 }] : []),
  ];
}

function tokenOriginCell(r: StatusRow): string {
  if (!r.token) return '-';
  if (r.token_source === 'IMAGING_TOKEN' && !r.token_usable) return 'not sent to this base URL';
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
