import { fstatSync } from 'node:fs';
import { ApiClient, tokenHeaderProblem } from './api/client.js';
import { redactToken } from './api/trace.js';
import { isLoopbackHost, normaliseBaseUrl } from './api/url.js';
import { ReferenceCache } from './cache/reference.js';
import type { GlobalOptions } from './cli/globals.js';
import {
  defaultBaseUrl,
  type EnvironmentName,
  envArg,
  isEmulatorToken,
  MOCK_TOKEN,
  parseEnvironment,
} from './config/environments.js';
import { ConfigStore, originOf, storedTokenOrigin } from './config/store.js';
import { AuthError, UsageError } from './errors.js';
import { colorLevel, type IO, type Prompter, type Sink } from './io.js';
import { type Meter, sandboxMeter, settleMeters } from './meter/attach.js';
import { DEFAULT_FORMATS, type OutputFormat, parseFormat } from './output/format.js';
import { clean, HumanStream, type SafeText, safe } from './output/text.js';
import { runForcedExitTasks } from './util/cleanup.js';

export type { GlobalOptions, IO, Prompter };

type TokenSource = 'IMAGING_TOKEN' | 'config' | 'emulator default' | 'none';
type ValueSource =
  | '--base-url'
  | 'IMAGING_BASE_URL'
  | 'config'
  | 'default'
  | 'none'
  | '--env'
  | 'IMAGING_ENV';

export interface Resolved<T, S> {
  value: T;
  source: S;
}

export interface ContextDeps {
  io: IO;
  env: NodeJS.ProcessEnv;
  globals: GlobalOptions;
  signal?: AbortSignal;
  prompter?: Prompter;
  openUrl?: (url: string) => Promise<boolean>;
  now?: () => Date;
  /** The command line as given (after the program name), to repeat it in advice. */
  argv?: readonly string[];
  /** The formats the command takes (its definition's `formats`); undefined: every one. */
  formats?: readonly OutputFormat[] | undefined;
  /** Test hook: options passed to every ApiClient this context builds. */
  clientOverrides?: Partial<ConstructorParameters<typeof ApiClient>[0]>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

// The Factory (as in gh): commands get streams, config and the API client from here, each built only when
// first asked for, so `imaging --version` or `webhook sign` never read the config.
export class Context {
  readonly io: IO;
  readonly env: NodeJS.ProcessEnv;
  readonly globals: GlobalOptions;
  readonly signal: AbortSignal;
  readonly now: () => Date;
  readonly argv: readonly string[];
  private readonly deps: ContextDeps;
  private configStore: ConfigStore | undefined;
  private client: ApiClient | undefined;
  private referenceCache: ReferenceCache | undefined;
  private humanOut: HumanStream | undefined;
  private humanErr: HumanStream | undefined;
  private readonly meters = new Map<ApiClient, Meter>();
  // Every token a client of this run sends: a server may echo one back in any text shown to a person.
  private readonly tokensInUse = new Set<string>();
  private readonly redactShown = (text: string): string => {
    let shown = text;
    for (const token of this.tokensInUse) shown = redactToken(shown, token);
    return shown;
  };

  constructor(deps: ContextDeps) {
    this.deps = deps;
    this.io = deps.io;
    this.env = deps.env;
    this.globals = deps.globals;
    this.signal = deps.signal ?? new AbortController().signal;
    this.now = deps.now ?? (() => new Date());
    this.argv = deps.argv ?? [];
  }

  /** Human output on stdout (tables, detail views, verdicts): through the one sanitiser. */
  get out(): HumanStream {
    this.humanOut ??= new HumanStream(
      this.io.stdout,
      this.io.stdoutIsTTY ? this.io.columns : undefined,
      this.redactShown,
    );
    return this.humanOut;
  }

  /** Everything on stderr (notes, hints, warnings, traces, progress) goes through the sanitiser. */
  get err(): HumanStream {
    this.humanErr ??= new HumanStream(
      this.io.stderr,
      this.io.stderrIsTTY ? this.io.errColumns : undefined,
      this.redactShown,
    );
    return this.humanErr;
  }

  get config(): ConfigStore {
    if (!this.configStore) {
      this.configStore = new ConfigStore(this.env);
      this.configStore.warn = (line) => this.note(line);
    }
    return this.configStore;
  }

  environment(): Resolved<EnvironmentName, ValueSource> {
    if (this.globals.env) return { value: parseEnvironment(this.globals.env, '--env'), source: '--env' };
    if (this.env.IMAGING_ENV)
      return { value: parseEnvironment(this.env.IMAGING_ENV, 'IMAGING_ENV'), source: 'IMAGING_ENV' };
    const stored = this.config.read().env;
    if (stored) return { value: parseEnvironment(stored, 'config "env"'), source: 'config' };
    return { value: 'sandbox', source: 'default' };
  }

  /**
   * Whether this run writes to production: by name, or by address (a sandbox or local environment
   * whose base URL is production's, same origin and path), so the production checks cannot be skipped.
   */
  targetsProduction(): boolean {
    const env = this.environment().value;
    if (env === 'production') return true;
    const here = this.baseUrl(env).value;
    let production: string | undefined;
    try {
      production = this.baseUrl('production').value;
    } catch {
      return false; // a broken stored production base URL is production's problem, said when it is used
    }
    return here !== undefined && production !== undefined && sameBase(here, production);
  }

  /** The base URL of `env`: --base-url and IMAGING_BASE_URL name the active environment's only. */
  baseUrl(env: EnvironmentName = this.environment().value): Resolved<string | undefined, ValueSource> {
    const active = env === this.environment().value;
    if (active && this.globals.baseUrl)
      return { value: normaliseBaseUrl(this.globals.baseUrl, '--base-url'), source: '--base-url' };
    if (active && this.env.IMAGING_BASE_URL)
      return {
        value: normaliseBaseUrl(this.env.IMAGING_BASE_URL, 'IMAGING_BASE_URL'),
        source: 'IMAGING_BASE_URL',
      };
    const stored = this.config.environment(env).base_url;
    if (stored) return { value: normaliseBaseUrl(stored, `config base-url (${env})`), source: 'config' };
    const def = defaultBaseUrl(env);
    if (def) return { value: def, source: 'default' };
    return { value: undefined, source: 'none' };
  }

  token(env: EnvironmentName = this.environment().value): Resolved<string | undefined, TokenSource> {
    const fromEnv = this.env.IMAGING_TOKEN?.trim() || undefined;
    const active = env === this.environment().value;
    if (env === 'local') {
      if (fromEnv && active && isEmulatorToken(fromEnv)) return { value: fromEnv, source: 'IMAGING_TOKEN' };
      if (fromEnv && active && !this.saidLocalToken) {
        this.saidLocalToken = true;
        this.note(
          "Note: IMAGING_TOKEN is set but not used: the local environment (the emulator) gets the emulator's token, never a real one.",
        );
      }
      const stored = this.storedToken(env);
      if (stored && isEmulatorToken(stored)) return { value: stored, source: 'config' };
      return { value: MOCK_TOKEN, source: 'emulator default' };
    }
    if (fromEnv && active) return { value: fromEnv, source: 'IMAGING_TOKEN' };
    const stored = this.storedToken(env);
    return stored ? { value: stored, source: 'config' } : { value: undefined, source: 'none' };
  }

  private storedToken(env: EnvironmentName): string | undefined {
    const stored: unknown = this.config.environment(env).token;
    // A hand-edited file may hold a number; an object or a list is no token at all (not logged in).
    if (typeof stored === 'number') return String(stored);
    return this.config.token(env);
  }

  private saidLocalToken = false;

  requireBaseUrl(env: EnvironmentName = this.environment().value): string {
    const base = this.baseUrl(env).value;
    if (!base) {
      throw new UsageError(
        `no base URL is set for the ${env} environment`,
        `Set it once: imaging config set base-url https://… --env ${env} (or pass --base-url, or use --env local with imaging mock)`,
      );
    }
    return base;
  }

  /** The API client for the chosen environment; fails (exit 3, nothing sent) without a token. */
  api(): ApiClient {
    if (this.client) return this.client;
    const env = this.environment().value;
    const baseUrl = this.requireBaseUrl(env);
    this.client = this.buildClient(baseUrl, this.sendableToken(env, baseUrl));
    return this.client;
  }

  /** The token of `env` that may go to `baseUrl`, or an AuthError (exit 3, nothing sent) saying why none may. */
  sendableToken(env: EnvironmentName, baseUrl: string): string {
    const { value: token, source } = this.token(env);
    if (!token) {
      throw new AuthError(
        `not logged in to the ${env} environment`,
        `Run: imaging auth login${env === 'sandbox' ? '' : ` --env ${env}`}   (or set IMAGING_TOKEN)`,
      );
    }
    const problem = tokenHeaderProblem(token);
    if (problem) {
      throw new AuthError(
        `the ${source === 'IMAGING_TOKEN' ? 'token in IMAGING_TOKEN' : `stored ${env} token`} cannot be sent: ${problem}`,
        source === 'IMAGING_TOKEN'
          ? 'Set IMAGING_TOKEN to the token exactly as issued.'
          : `Copy the token again from where it was issued, then: imaging auth login${envArg(env)} --with-token < token.txt`,
      );
    }
    if (source === 'config') this.checkTokenOrigin(env, baseUrl);
    if (source === 'IMAGING_TOKEN') this.checkLoopbackNamed(env, baseUrl, token);
    return token;
  }

  // Any local user can listen on a loopback port the emulator or a tunnel is not holding: a real token from
  // IMAGING_TOKEN goes to one only when this run names it (--base-url, IMAGING_BASE_URL).
  private checkLoopbackNamed(env: EnvironmentName, baseUrl: string, token: string): void {
    if (isEmulatorToken(token) || !isLoopbackHost(new URL(baseUrl).hostname)) return;
    const from = this.baseUrl(env).source;
    if (from === '--base-url' || from === 'IMAGING_BASE_URL') return;
    throw new AuthError(
      `IMAGING_TOKEN is not sent to ${originOf(baseUrl)}, a port on this machine that any local user may listen on, because this run did not name it (the base URL comes from ${from})`,
      `If the token belongs there, name it: --base-url ${baseUrl} (or IMAGING_BASE_URL), or store the token for it: imaging auth login${envArg(env)}`,
    );
  }

  /** The API client with the reference-data cache on: `--no-cache` leaves it off, `--refresh` stores anew. */
  referenceApi(): ApiClient {
    if (this.globals.cache === false && this.globals.refresh)
      throw new UsageError('--no-cache and --refresh cannot be used together');
    const client = this.api();
    const token = this.token().value;
    if (this.globals.cache !== false && token && !this.referenceCache) {
      this.referenceCache = new ReferenceCache({
        env: this.env,
        token,
        mode: this.globals.refresh ? 'refresh' : 'use',
        now: () => this.now().getTime(),
        trace: this.globals.verbose ? (line) => this.err.write(safe`${line}\n`) : undefined,
      });
      client.cache = this.referenceCache;
    }
    return client;
  }

  /** Writes the answers the reference cache was given; main calls it after a command exited 0. */
  commitCache(): void {
    this.referenceCache?.commit();
  }

  /** The origin the stored token of `env` is bound to. */
  tokenOrigin(env: EnvironmentName, baseUrl: string): string {
    const settings = this.config.environment(env);
    const recorded = storedTokenOrigin(settings);
    if (recorded) return recorded;
    let storedBase: string | undefined;
    try {
      storedBase = settings.base_url ? normaliseBaseUrl(settings.base_url) : undefined;
    } catch {
      storedBase = undefined;
    }
    const home = storedBase ?? defaultBaseUrl(env);
    if (!home) {
      const from = this.baseUrl(env).source;
      throw new AuthError(
        `the stored ${env} token has no origin recorded yet (a config from an older version) and the base URL ${originOf(baseUrl)} comes from ${from}, not from the config: the token is not sent until you bind it on purpose`,
        `If ${originOf(baseUrl)} is where the token belongs: imaging config set base-url ${baseUrl} --env ${env} (binds the token to it), or log in again: imaging auth login${envArg(env)} --base-url ${baseUrl}; for a one-off, set IMAGING_TOKEN.`,
      );
    }
    const origin = originOf(home);
    let saved = '';
    try {
      this.config.updateSync((c) => {
        const s = c.environments?.[env];
        if (s && s.token === settings.token) s.token_origin = origin;
      });
    } catch (err) {
      saved = ` (not saved: ${(err as Error).message})`;
    }
    this.note(
      `Note: the stored ${env} token had no origin recorded (a config from an older version); it is now bound to ${origin} (the ${storedBase ? 'stored base-url' : 'built-in default'} of ${env}) and will be sent only there${saved}.`,
    );
    return origin;
  }

  /** A stored token goes only to the origin it was stored for (exit 3 before any request otherwise). */
  private checkTokenOrigin(env: EnvironmentName, baseUrl: string): void {
    const bound = this.tokenOrigin(env, baseUrl);
    const target = originOf(baseUrl);
    if (bound === target) return;
    const from = this.baseUrl(env).source;
    throw new AuthError(
      `the stored ${env} token belongs to ${bound}, not to ${target} (the base URL from ${from}): it is never sent to another server`,
      from === 'config'
        ? `Log in for the new base URL: imaging auth login${envArg(env)}; for a one-off, set IMAGING_TOKEN instead.`
        : `If ${target} is meant, log in for it: imaging auth login${envArg(env)} --base-url ${baseUrl}, or set IMAGING_TOKEN for a one-off; otherwise ${from === 'IMAGING_BASE_URL' ? 'unset IMAGING_BASE_URL' : 'leave out --base-url'}.`,
    );
  }

  /** A client for a given base URL and token (auth login verifies a token before storing it). */
  buildClient(
    baseUrl: string,
    token: string | undefined,
    env: EnvironmentName = this.environment().value,
  ): ApiClient {
    if (token !== undefined && this.env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
      throw new AuthError(
        'NODE_TLS_REJECT_UNAUTHORIZED=0 turns off certificate checks, so imaging sends no token: anyone between here and the server could read it',
        'Unset NODE_TLS_REJECT_UNAUTHORIZED. For a private or corporate CA, name its certificate instead: NODE_EXTRA_CA_CERTS=/path/to/ca.pem',
      );
    }
    const meter = sandboxMeter(this, env, baseUrl, token);
    if (token !== undefined) this.tokensInUse.add(token);
    const client = new ApiClient({
      baseUrl,
      token,
      clean,
      onAnswer: meter && ((status, code) => meter.answer(status, code)),
      timeoutMs: this.globals.timeout ?? DEFAULT_TIMEOUT_MS,
      // A trace line holds the server's reason phrase and request id: one cleaned line each.
      trace: this.globals.verbose ? (line) => this.err.write(safe`${line}\n`) : undefined,
      signal: this.signal,
      env: this.env,
      ...this.deps.clientOverrides,
    });
    if (meter) this.meters.set(client, meter);
    return client;
  }

  /** Writes the counts the meters hold so far (before reading the meter back). */
  flushMeters(): void {
    for (const m of this.meters.values()) m.flush();
  }

  /** The allowance meter of api()'s client: only in the sandbox. */
  meter(): Meter | undefined {
    return this.client && this.meters.get(this.client);
  }

  /** The output format: --format, else --json, else the command's default. */
  format(fallback: OutputFormat = 'table', allowed = this.deps.formats ?? DEFAULT_FORMATS): OutputFormat {
    const f = this.globals.format ? parseFormat(this.globals.format) : this.globals.json ? 'json' : fallback;
    if (allowed && !allowed.includes(f)) {
      throw new UsageError(`--format ${f} is not available here`, `Use one of: ${allowed.join(', ')}.`);
    }
    if (this.globals.bom && f !== 'csv')
      throw new UsageError(`--bom is for CSV output, not ${f}`, 'Add --format csv, or leave --bom out.');
    return f;
  }

  colorLevel(stream: 'stdout' | 'stderr' = 'stdout'): 0 | 1 {
    return colorLevel(this.io, this.env, this.globals.color === false, stream);
  }

  sink(): Sink {
    const ctx = this;
    return {
      data: this.io.stdout,
      out: this.out,
      // Made only when a renderer writes a note (a JSON answer never touches stderr).
      get err() {
        return ctx.err;
      },
      color: this.colorLevel() > 0,
      width: this.io.stdoutIsTTY && !this.globals.wide ? this.io.columns : undefined,
      tty: this.io.stdoutIsTTY,
      csv: { bom: this.globals.bom === true, formulaGuard: this.globals.formulaGuard !== false },
    };
  }

  async prompter(): Promise<Prompter> {
    if (this.deps.prompter) return this.deps.prompter;
    const { terminalPrompter } = await import('./cli/prompt.js');
    return terminalPrompter(this.io, this.signal);
  }

  /** Opens a URL in the browser: `opened` only when the opener confirmed (started, exited 0). */
  async openUrl(url: string): Promise<{ opened: boolean; reason?: string | undefined }> {
    if (this.deps.openUrl) return { opened: await this.deps.openUrl(url) };
    const { openInBrowser } = await import('./util/open.js');
    return openInBrowser(url, this.env);
  }

  /** Said after "interrupted" when the run is stopped by a signal (main prints it there). */
  interruptNote: string | undefined;

  /** A hint or note on stderr (never stdout, which carries data), through the sanitiser. */
  note(message: string | SafeText): void {
    this.err.line(message);
  }

  close(): void {
    this.client?.close();
    settleMeters(this, this.meters.values());
  }
}

/** Whether two descriptors are the same open pipe or file (`2>&1`): one reader for both. */
function sameReader(a: number, b: number): boolean {
  try {
    const x = fstatSync(a);
    const y = fstatSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

export function processIO(stoppedBy: () => number | undefined = () => undefined): IO {
  // Output that can no longer reach anyone stops the run: quietly (as Unix tools) on EPIPE, unless work is left
  // unfinished or only stderr's reader went while stdout still expects the answer.
  const watch = (stream: NodeJS.WriteStream) => {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      const unfinished = runForcedExitTasks();
      const signalled = stoppedBy();
      if (signalled !== undefined) process.exit(signalled);
      if (err.code === 'EPIPE') {
        const code = process.exitCode === undefined ? 0 : Number(process.exitCode);
        if (unfinished > 0) process.exit(1);
        if (stream === process.stdout || sameReader(1, 2)) process.exit(code);
        process.exit(code === 0 ? 1 : code);
      }
      if (stream === process.stdout) {
        try {
          new HumanStream(process.stderr).line(
            `error: cannot write to standard output: ${err.message.replace(/, \w+$/, '')}`,
          );
        } catch {
          // stderr is gone too
        }
      }
      process.exit(1);
    });
    return stream;
  };
  watch(process.stdout);
  // process.stderr builds a stream when first touched: only when something is written to it.
  let stderr: NodeJS.WriteStream | undefined;
  let stderrTTY: boolean | undefined;
  let stdinTTY: boolean | undefined;
  return {
    stdout: process.stdout,
    get stderr() {
      stderr ??= watch(process.stderr);
      return stderr;
    },
    // process.stdin builds a stream (and may open the terminal) when first touched: only when a command reads it.
    get stdin() {
      return process.stdin;
    },
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    // Asked when a command needs them (prompts, progress, the error block): node:tty loads then.
    get stderrIsTTY() {
      stderrTTY ??= process.getBuiltinModule('node:tty').isatty(2);
      return stderrTTY;
    },
    get stdinIsTTY() {
      stdinTTY ??= process.getBuiltinModule('node:tty').isatty(0);
      return stdinTTY;
    },
    columns: process.stdout.isTTY ? process.stdout.columns : undefined,
    get errColumns() {
      return this.stderrIsTTY ? process.stderr.columns : undefined;
    },
  };
}

/** Two base URLs name the same API: the same origin and path, trailing slashes aside. */
function sameBase(a: string, b: string): boolean {
  // One key for the spellings of one server: a host's trailing dot, and this machine by any name.
  const key = (url: string) => {
    const u = new URL(url);
    const host = u.hostname.replace(/\.$/, '');
    const here = host === 'localhost' || host === '[::1]' || /^127\./.test(host) ? 'loopback' : host;
    return `${u.protocol}//${here}:${u.port}${u.pathname.replace(/\/+$/, '')}`;
  };
  return key(a) === key(b);
}
