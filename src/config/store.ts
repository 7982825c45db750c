import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { CliError, ExitCode } from '../errors.js';
import type { EnvironmentName } from './environments.js';
import { CONFIG_FILE_NAME, configDir } from './paths.js';
import { validateConfig } from './validate.js';

export interface EnvironmentSettings {
  base_url?: string;
  token?: string;
  /** The origin (scheme, host, port) the token was stored for; it is sent nowhere else. */
  token_origin?: string;
}

export interface StoredConfig {
  env?: EnvironmentName;
  environments?: Partial<Record<EnvironmentName, EnvironmentSettings>>;
}

/**
 * The config store. Reads parse the JSON file directly: importing `conf` (and the JSON-schema
 * validator it pulls in) costs ~100 ms, more than a whole lookup may take. Writes go through
 * `conf`, loaded only then, which writes atomically with file mode 0600.
 */
export class ConfigStore {
  readonly dir: string;
  readonly path: string;
  private cache: StoredConfig | undefined;

  constructor(env: NodeJS.ProcessEnv) {
    this.dir = configDir(env);
    this.path = `${this.dir}/${CONFIG_FILE_NAME}`;
  }

  read(): StoredConfig {
    if (this.cache) return this.cache;
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return (this.cache = {});
      throw new CliError(
        `cannot read the config file ${this.path}: ${(err as Error).message}`,
        ExitCode.failure,
      );
    }
    let parsed: unknown;
    try {
      parsed = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      throw new CliError(
        `the config file ${this.path} is not valid JSON`,
        ExitCode.failure,
        'Fix or delete it, then log in again.',
      );
    }
    // A hand-edited file: its shape is checked here, once, so no command meets a number where
    // it reads text. The commands that repair it (lenient) get what is usable and rewrite it.
    const { config, problems } = validateConfig(parsed, this.path);
    const first = problems[0];
    if (first && !this.lenient) {
      throw new CliError(
        `the config file ${this.path} is not usable: ${first.key === '' ? 'the file' : `"${first.key}"`} ${first.problem}${problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length === 2 ? '' : 's'})` : ''}`,
        // A stored token of the wrong shape is no usable token: exit 3, as "not logged in" is.
        /\.token(_origin)?$/.test(first.key) ? ExitCode.auth : ExitCode.failure,
        first.fix,
      );
    }
    this.cache = config;
    return this.cache;
  }

  /**
   * For the commands that repair a config (auth login/logout, config set/unset): keys of the
   * wrong shape are left out of what they read, so that what they write is whole again.
   */
  lenient = false;

  environment(env: EnvironmentName): EnvironmentSettings {
    return this.read().environments?.[env] ?? {};
  }

  /** Applies `change` to a copy of the stored config and writes it (0600, atomically). */
  async update(change: (config: StoredConfig) => void): Promise<void> {
    const next: StoredConfig = structuredClone(this.read());
    change(next);
    pruneEmpty(next);
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const { default: Conf } = await import('conf');
      const conf = new Conf<Record<string, unknown>>({
        cwd: this.dir,
        configName: CONFIG_FILE_NAME.replace(/\.json$/, ''),
        configFileMode: 0o600,
        accessPropertiesByDotNotation: false,
      });
      conf.store = next as Record<string, unknown>;
      // conf sets the mode on files it creates; an older file written by hand keeps its own.
      chmodSync(this.path, 0o600);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new CliError(
        `cannot write the config file ${this.path}: ${code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (err as Error).message}`,
        ExitCode.failure,
        'Check the folder is yours and writable, or point IMAGING_CONFIG_DIR elsewhere.',
      );
    }
    this.cache = next;
  }

  /**
   * The same as update(), synchronously and without conf, for the one write a request-making
   * command may do (binding an old token to its origin) without making api() asynchronous.
   * Written to a temporary file (0600) and renamed over the config, so it is never half-written.
   */
  updateSync(change: (config: StoredConfig) => void): void {
    const next: StoredConfig = structuredClone(this.read());
    change(next);
    pruneEmpty(next);
    const tmp = `${this.path}.${process.pid}.tmp`;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(tmp, JSON.stringify(next, null, '\t'), { mode: 0o600 });
      renameSync(tmp, this.path);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw new CliError(
        `cannot write the config file ${this.path}: ${(err as Error).message}`,
        ExitCode.failure,
      );
    }
    this.cache = next;
  }
}

/** The origin of a base URL (scheme, host and port; default ports left out), as tokens are bound to it. */
export function originOf(baseUrl: string): string {
  return new URL(baseUrl).origin;
}

/**
 * The origin a stored token is bound to, compared as an origin, not as text: a hand-edited
 * "HTTP://127.1:4451/path" is http://127.0.0.1:4451. Undefined when none is recorded; a value that
 * is no URL is returned as it is (it matches no base URL, so the token is not sent).
 */
export function storedTokenOrigin(settings: EnvironmentSettings): string | undefined {
  const raw: unknown = settings.token_origin;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  try {
    return originOf(raw.trim());
  } catch {
    return raw;
  }
}

function pruneEmpty(config: StoredConfig): void {
  const envs = config.environments;
  if (!envs) return;
  for (const key of Object.keys(envs) as EnvironmentName[]) {
    const settings = envs[key];
    if (!settings) continue;
    for (const k of Object.keys(settings) as (keyof EnvironmentSettings)[]) {
      if (settings[k] === undefined || settings[k] === '') delete settings[k];
    }
    if (Object.keys(settings).length === 0) delete envs[key];
  }
  if (Object.keys(envs).length === 0) delete config.environments;
}

/** Shows only the last four characters of a secret. */
export function maskToken(token: string): string {
  if (token.length <= 8) return '****';
  return `****${token.slice(-4)}`;
}
