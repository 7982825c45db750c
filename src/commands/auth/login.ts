import { tokenHeaderProblem } from '../../api/client.js';
import { MODALITIES_PATH } from '../../api/endpoints/reference.js';
import { normaliseBaseUrl } from '../../api/url.js';
import { defineCommand } from '../../cli/define.js';
import { flag, negate } from '../../cli/options.js';
import { readAll } from '../../cli/stdin.js';
import { type EnvironmentName, envArg, isEmulatorToken } from '../../config/environments.js';
import { maskToken, originOf } from '../../config/store.js';
import type { Context } from '../../context.js';
import { ApiError, AuthError, CliError, ExitCode, exitCodeOf, UsageError } from '../../errors.js';

export default defineCommand({
  path: ['auth', 'login'],
  options: {
    withToken: flag('--with-token', 'read the token from standard input'),
    verify: negate('--no-verify', 'store the token without checking it against the API'),
    insecureStorage: flag('--insecure-storage', 'keep the token in the config file, not the OS keychain'),
  },
  async run(ctx, _args, opts) {
    ctx.config.repair((line) => ctx.note(line)); // it can repair a hand-edited config: see ConfigStore.read
    const env = ctx.environment().value;
    const baseUrl = loginBaseUrl(ctx, env);
    const token = await readToken(ctx, env, baseUrl, opts.withToken === true);
    // The emulator is sent only its own tokens: a real one stored for it would never be used.
    if (env === 'local' && !isEmulatorToken(token))
      throw new UsageError(
        "local is the emulator, which takes only the emulator's tokens (mock-…): this token is not stored",
        'The emulator needs no login. For a real server: imaging auth login (sandbox) or imaging auth login --env production.',
      );
    if (opts.verify !== false) await verifyToken(ctx, env, baseUrl, token);

    // The token is bound to the origin it was given for, and is sent nowhere else.
    const saved = await ctx.config.setToken(
      env,
      { token, origin: originOf(baseUrl) },
      (settings) => {
        if (ctx.globals.baseUrl) settings.base_url = baseUrl;
      },
      { insecure: opts.insecureStorage === true },
    );
    if (saved.fallback)
      ctx.note(
        `Note: no OS keychain took the token (${saved.fallback}), so it is kept in ${ctx.config.path}, readable only by you.`,
      );
    ctx.note(
      `Logged in to ${env} (${baseUrl}) with token ${maskToken(token)}${opts.verify === false ? ' (not verified)' : ''}, kept in ${saved.store === 'keychain' ? 'the OS keychain' : 'the config file'}; it is sent only to ${originOf(baseUrl)}.`,
    );
    const fromEnv = ctx.env.IMAGING_TOKEN?.trim();
    if (fromEnv && (env !== 'local' || isEmulatorToken(fromEnv)))
      ctx.note('Note: IMAGING_TOKEN is set in this shell and wins over the stored token.');
    return 0;
  },
});

/** The base URL the token is for; one from IMAGING_BASE_URL alone never moves a stored origin. */
function loginBaseUrl(ctx: Context, env: EnvironmentName): string {
  const baseUrl = ctx.globals.baseUrl
    ? normaliseBaseUrl(ctx.globals.baseUrl, '--base-url')
    : ctx.baseUrl(env).value;
  if (!baseUrl) {
    throw new UsageError(
      `no base URL is set for the ${env} environment`,
      `Give it once: imaging auth login --env ${env} --base-url https://…`,
    );
  }
  const storedBase = ctx.config.environment(env).base_url;
  if (!ctx.globals.baseUrl && storedBase && ctx.env.IMAGING_BASE_URL) {
    const stored = normaliseBaseUrl(storedBase, `config base-url (${env})`);
    if (originOf(stored) !== originOf(baseUrl)) {
      throw new UsageError(
        `IMAGING_BASE_URL (${baseUrl}) is another origin than the stored base-url of ${env} (${stored}); the token is not sent until you say which`,
        `For that server: imaging auth login${envArg(env)} --base-url ${baseUrl}; for the stored one, unset IMAGING_BASE_URL.`,
      );
    }
  }
  return baseUrl;
}

async function readToken(
  ctx: Context,
  env: EnvironmentName,
  baseUrl: string,
  withToken: boolean,
): Promise<string> {
  let token: string;
  if (withToken) {
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
  return token;
}

/** One cheap request (the modalities list) with the new token; nothing is stored when it fails. */
async function verifyToken(
  ctx: Context,
  env: EnvironmentName,
  baseUrl: string,
  token: string,
): Promise<void> {
  const client = ctx.buildClient(baseUrl, token);
  try {
    await client.request({ path: MODALITIES_PATH });
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
