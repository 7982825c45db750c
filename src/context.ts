import type { Readable, Writable } from 'node:stream';
import { isatty } from 'node:tty';
import { ApiClient } from './api/client.js';
import { normaliseBaseUrl } from './api/url.js';
import { defaultBaseUrl, type EnvironmentName, MOCK_TOKEN, parseEnvironment } from './config/environments.js';
import { ConfigStore } from './config/store.js';
import { AuthError, UsageError } from './errors.js';
import { type OutputFormat, parseFormat } from './output/format.js';
import { runForcedExitTasks } from './util/cleanup.js';

/** What a command may touch of the outside world: streams and whether they are terminals. */
export interface IO {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  stdinIsTTY: boolean;
  /** Terminal width for tables; undefined when stdout is not a terminal. */
  columns: number | undefined;
}

/** Options every command accepts, before or after the subcommand. */
export interface GlobalOptions {
  env?: string | undefined;
  baseUrl?: string | undefined;
  format?: string | undefined;
  json?: boolean | undefined;
  timeout?: number | undefined;
  verbose?: boolean | undefined;
  color?: boolean | undefined;
  yes?: boolean | undefined;
}

export interface Prompter {
  /** Hidden input (a token or a secret). */
  secret(message: string): Promise<string>;
  confirm(message: string): Promise<boolean>;
}

export type TokenSource = 'IMAGING_TOKEN' | 'config' | 'emulator default' | 'none';
export type ValueSource =
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
  /** Test hook: options passed to every ApiClient this context builds. */
  clientOverrides?: Partial<ConstructorParameters<typeof ApiClient>[0]>;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The Factory (as in gh): commands get streams, config and the API client from here, each built
 * only when first asked for, so `imaging --version` or `webhook sign` never read the config.
 */
export class Context {
  readonly io: IO;
  readonly env: NodeJS.ProcessEnv;
  readonly globals: GlobalOptions;
  readonly signal: AbortSignal;
  readonly now: () => Date;
  private readonly deps: ContextDeps;
  private configStore: ConfigStore | undefined;
  private client: ApiClient | undefined;

  constructor(deps: ContextDeps) {
    this.deps = deps;
    this.io = deps.io;
    this.env = deps.env;
    this.globals = deps.globals;
    this.signal = deps.signal ?? new AbortController().signal;
    this.now = deps.now ?? (() => new Date());
  }

  get config(): ConfigStore {
    this.configStore ??= new ConfigStore(this.env);
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

  baseUrl(env: EnvironmentName = this.environment().value): Resolved<string | undefined, ValueSource> {
    if (this.globals.baseUrl)
      return { value: normaliseBaseUrl(this.globals.baseUrl, '--base-url'), source: '--base-url' };
    if (this.env.IMAGING_BASE_URL)
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
    const fromEnv = this.env.IMAGING_TOKEN?.trim();
    if (fromEnv) return { value: fromEnv, source: 'IMAGING_TOKEN' };
    const stored = this.config.environment(env).token;
    if (stored) return { value: stored, source: 'config' };
    if (env === 'local') return { value: MOCK_TOKEN, source: 'emulator default' };
    return { value: undefined, source: 'none' };
  }

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
    const token = this.token(env).value;
    if (!token) {
      throw new AuthError(
        `not logged in to the ${env} environment`,
        `Run: imaging auth login${env === 'sandbox' ? '' : ` --env ${env}`}   (or set IMAGING_TOKEN)`,
      );
    }
    this.client = this.buildClient(baseUrl, token);
    return this.client;
  }

  /** A client for a given base URL and token (auth login verifies a token before storing it). */
  buildClient(baseUrl: string, token: string | undefined): ApiClient {
    return new ApiClient({
      baseUrl,
      token,
      timeoutMs: this.globals.timeout ?? DEFAULT_TIMEOUT_MS,
      trace: this.globals.verbose ? (line) => this.io.stderr.write(`${line}\n`) : undefined,
      signal: this.signal,
      ...this.deps.clientOverrides,
    });
  }

  /** The output format: --format, else --json, else the command's default. */
  format(fallback: OutputFormat = 'table', allowed?: readonly OutputFormat[]): OutputFormat {
    const f = this.globals.format ? parseFormat(this.globals.format) : this.globals.json ? 'json' : fallback;
    if (allowed && !allowed.includes(f)) {
      throw new UsageError(`--format ${f} is not available here`, `Use one of: ${allowed.join(', ')}.`);
    }
    return f;
  }

  /** Colour on stdout: off with --no-color, NO_COLOR, or when stdout is not a terminal (unless FORCE_COLOR). */
  colorLevel(stream: 'stdout' | 'stderr' = 'stdout'): 0 | 1 {
    if (this.globals.color === false) return 0;
    if (this.env.NO_COLOR !== undefined && this.env.NO_COLOR !== '') return 0;
    const force = this.env.FORCE_COLOR;
    if (force !== undefined) return force === '0' || force === 'false' ? 0 : 1;
    return (stream === 'stdout' ? this.io.stdoutIsTTY : this.io.stderrIsTTY) ? 1 : 0;
  }

  async prompter(): Promise<Prompter> {
    if (this.deps.prompter) return this.deps.prompter;
    const { terminalPrompter } = await import('./util/prompt.js');
    return terminalPrompter(this.io);
  }

  async openUrl(url: string): Promise<boolean> {
    if (this.deps.openUrl) return this.deps.openUrl(url);
    const { openInBrowser } = await import('./util/open.js');
    return openInBrowser(url, this.env);
  }

  /** Writes a hint or note to stderr (never to stdout, which carries data). */
  note(message: string): void {
    this.io.stderr.write(`${message}\n`);
  }

  close(): void {
    this.client?.close();
  }
}

/**
 * The process's own streams. `stoppedBy` gives the exit code of a signal already received (a closed
 * terminal fails writes with EIO after SIGHUP: the signal's code wins).
 */
export function processIO(stoppedBy: () => number | undefined = () => undefined): IO {
  // Output that can no longer reach anyone stops the run at once. Temporary files are removed on
  // the way out; work left unfinished (an -o export) exits 1, never 0. Otherwise a reader that
  // goes away (`imaging … | head`) is not an error: stop quietly, as Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      const unfinished = runForcedExitTasks();
      const signalled = stoppedBy();
      if (signalled !== undefined) process.exit(signalled);
      if (err.code === 'EPIPE') process.exit(unfinished > 0 ? 1 : (process.exitCode ?? 0));
      if (stream === process.stdout) {
        try {
          process.stderr.write(
            `error: cannot write to standard output: ${err.message.replace(/, \w+$/, '')}\n`,
          );
        } catch {
          // stderr is gone too
        }
      }
      process.exit(1);
    });
  }
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // process.stdin builds a stream (and may open the terminal) when first touched: only when a command reads it.
    get stdin() {
      return process.stdin;
    },
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
    stdinIsTTY: isatty(0),
    columns: process.stdout.isTTY ? process.stdout.columns : undefined,
  };
}
