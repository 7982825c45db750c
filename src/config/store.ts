import { lstatSync, mkdirSync, type Stats } from 'node:fs';
import { AuthError, CliError, ExitCode } from '../errors.js';
import {
  describeFile,
  mine,
  readNoFollow,
  reasonOf,
  userName,
  withLock,
  writeFileAtomic,
} from '../fs/write-file.js';
import { num } from '../util/plural.js';
import { type EnvironmentName, envArg } from './environments.js';
import {
  KeychainUnavailable,
  keychainAccount,
  keychainRead,
  keychainRemove,
  keychainStore,
} from './keychain.js';
import { CONFIG_FILE_NAME, configDir } from './paths.js';
import {
  type ConfigProblem,
  type EnvironmentSettings,
  type StoredConfig,
  validateConfig,
} from './validate.js';

export type { EnvironmentSettings, StoredConfig };

/** A config larger than this is no config of ours (a device, a runaway file): refused, never read whole. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

const moveAside = 'Move it aside; the next auth login or config set writes a new one.';

/** Trusted as ssh trusts ~/.ssh: this user's, writable by no one else, never through a symlink. */
function checkOwned(path: string, st: Stats, kind: 'folder' | 'file'): void {
  const fix = kind === 'folder' ? 'chmod 700' : 'chmod 600';
  const refuse = (why: string, hint: string) => {
    throw new CliError(`the config ${kind} ${path} ${why}: it is not used`, ExitCode.failure, hint);
  };
  if (st.isSymbolicLink())
    refuse(
      'is a symlink, which is never followed',
      `Replace it with a real ${kind} (0700 folder, 0600 file), or point IMAGING_CONFIG_DIR at one.`,
    );
  if (!mine(st))
    refuse(
      `belongs to ${userName(st.uid)}, not to you (${userName(process.geteuid?.() ?? st.uid)})`,
      `If it is yours: chown ${kind === 'folder' ? '-R ' : ''}"$(id -un)" "${path}" && ${fix} "${path}"; otherwise point IMAGING_CONFIG_DIR at a folder of your own.`,
    );
  if ((st.mode & 0o022) !== 0)
    refuse(`can be written by others (mode ${(st.mode & 0o777).toString(8)})`, `Run: ${fix} "${path}"`);
}

/** The config file's text and mode, or undefined when there is none: a regular file only, never through a symlink. */
function readConfigText(dir: string, path: string): { text: string; mode: number } | undefined {
  let folder: Stats;
  try {
    folder = lstatSync(dir);
  } catch (err) {
    if (['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw err;
  }
  if (!folder.isDirectory() && !folder.isSymbolicLink())
    throw new CliError(
      `the config folder ${dir} is ${describeFile(folder)}, not a folder: no setting or token can be read`,
      ExitCode.failure,
      'Point IMAGING_CONFIG_DIR at a folder (it is made, 0700, at the first auth login or config set).',
    );
  checkOwned(dir, folder, 'folder');
  let mode = 0;
  try {
    const bytes = readNoFollow(path, (st) => {
      mode = st.mode;
      if (!st.isFile())
        throw new CliError(
          `the config file ${path} is ${describeFile(st)}, not a file`,
          ExitCode.failure,
          moveAside,
        );
      checkOwned(path, st, 'file');
      if (st.size > MAX_CONFIG_BYTES)
        throw new CliError(
          `the config file ${path} is ${num(st.size)} bytes: no config is that large`,
          ExitCode.failure,
          moveAside,
        );
    });
    return { text: bytes.toString('utf8'), mode };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') checkOwned(path, lstatSync(path), 'file');
    throw err;
  }
}

export class ConfigStore {
  readonly dir: string;
  readonly path: string;
  private cache: StoredConfig | undefined;
  private readonly keychainTokens = new Map<EnvironmentName, string>();

  constructor(private readonly env: NodeJS.ProcessEnv) {
    this.dir = configDir(env);
    this.path = `${this.dir}/${CONFIG_FILE_NAME}`;
  }

  read(): StoredConfig {
    this.cache ??= this.load();
    return this.cache;
  }

  private load(): StoredConfig {
    let text: string;
    try {
      const read = readConfigText(this.dir, this.path);
      if (read === undefined) return {};
      text = read.text;
      this.fileMode = read.mode;
    } catch (err) {
      if (err instanceof CliError) throw err;
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
    // A hand-edited file is checked here, once, so no command meets a number where it reads text.
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
    if (this.lenient) this.leftOut = problems;
    this.sayExposed(config);
    return config;
  }

  /** Keys of the wrong shape left out, so what the repairing commands write is whole again. */
  lenient = false;

  /** Where a warning about the file goes (the context's stderr): once per run. */
  warn: ((line: string) => void) | undefined;
  private fileMode = 0;
  private warnedExposed = false;

  private leftOut: ConfigProblem[] = [];
  private report: ((line: string) => void) | undefined;

  /** Reads leniently, and says on stderr what it left out once a write removed it from the file. */
  repair(report: (line: string) => void): void {
    this.lenient = true;
    this.report = report;
  }

  get unusable(): string[] {
    this.read();
    return this.leftOut.map((p) => p.key);
  }

  private sayRemoved(): void {
    const removed = this.leftOut;
    this.leftOut = [];
    if (removed.length === 0) return;
    const items = removed.map(
      (p) =>
        `${p.key === '' ? 'the whole file' : p.key} (${p.problem.replace(/^is /, '')}${/\.token_origin$/.test(p.key) ? '; the token stored with it too' : ''})`,
    );
    const one = items.length === 1;
    this.report?.(
      `warning: in the config file ${this.path}, ${one ? 'this value was' : `${items.length} values were`} not usable and ${one ? 'was' : 'were'} removed: ${items.join(', ')}`,
    );
  }

  environment(env: EnvironmentName): EnvironmentSettings {
    return this.read().environments?.[env] ?? {};
  }

  /**
   * Applies `change` to the config as it is on disk now, under the lock file: concurrent updates
   * each keep their change, and a change decided before a prompt never writes back what another removed.
   */
  async update(change: (config: StoredConfig) => void): Promise<void> {
    this.updateSync(change);
  }

  /** update(), synchronously: for binding an old token to its origin during a request. */
  updateSync(change: (config: StoredConfig) => void): void {
    let next: StoredConfig;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      checkOwned(this.dir, lstatSync(this.dir), 'folder');
      next = withLock(`${this.path}.lock`, () => {
        const fresh = structuredClone(this.load());
        change(fresh);
        pruneEmpty(fresh);
        writeFileAtomic(this.path, JSON.stringify(fresh, null, '\t'));
        return fresh;
      });
    } catch (err) {
      if (err instanceof CliError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      throw new CliError(
        `cannot write the config file ${this.path}: ${code === 'ELOCKED' ? `another imaging has held its lock file ${this.path}.lock for 10 s` : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : reasonOf(err)}`,
        ExitCode.failure,
        code === 'ELOCKED'
          ? `If no other imaging is running, remove the lock file: rm "${this.path}.lock"`
          : 'Check the folder is yours and writable, or point IMAGING_CONFIG_DIR elsewhere.',
      );
    }
    this.cache = next;
    this.sayRemoved();
  }

  tokenStore(env: EnvironmentName): 'keychain' | 'file' | undefined {
    const s = this.environment(env);
    if (s.token_store === 'keychain') return 'keychain';
    return typeof s.token === 'string' && s.token !== '' ? 'file' : undefined;
  }

  /** As ssh says of a private key others can read: any token in a file others can read may be theirs. */
  private sayExposed(config: StoredConfig): void {
    if ((this.fileMode & 0o044) === 0 || this.warnedExposed) return;
    const envs = Object.entries(config.environments ?? {})
      .filter(([, e]) => typeof e?.token === 'string' && e.token !== '')
      .map(([name]) => name);
    if (envs.length === 0) return;
    this.warnedExposed = true;
    this.warn?.(
      `warning: the config file ${this.path} can be read by other users (mode ${(this.fileMode & 0o777).toString(8)}) and holds the ${envs.join(' and ')} token${envs.length > 1 ? 's' : ''}: run chmod 600 "${this.path}", and if others could have read it, replace ${envs.length > 1 ? 'them' : 'it'}`,
    );
  }

  /** The one place a token is read from the store. */
  token(env: EnvironmentName): string | undefined {
    const s = this.environment(env);
    if (typeof s.token === 'string' && s.token !== '') return s.token;
    if (s.token_store !== 'keychain') return undefined;
    const known = this.keychainTokens.get(env);
    if (known) return known;
    const login = `imaging auth login${envArg(env)}`;
    let value: string | null;
    try {
      value = keychainRead(keychainAccount(env, s.token_origin), this.env);
    } catch (err) {
      if (!(err instanceof KeychainUnavailable)) throw err;
      throw new AuthError(
        `the ${env} token is kept in the OS keychain, which could not be read: ${err.reason}`,
        `Unlock the keychain and try again, or keep the token in the config file instead: ${login} --insecure-storage`,
      );
    }
    if (value === null || value === '')
      throw new AuthError(
        `the OS keychain has no ${env} token, though the config says it keeps one (removed outside imaging?)`,
        `Log in again: ${login}`,
      );
    this.keychainTokens.set(env, value);
    return value;
  }

  /**
   * The one place a token is written (or, with `undefined`, removed), bound to `origin`: the OS
   * keychain unless `insecure`; where none answers, the file, and `fallback` says why.
   */
  async setToken(
    env: EnvironmentName,
    value: { token: string; origin: string } | undefined,
    also?: (settings: EnvironmentSettings) => void,
    opts: { insecure?: boolean } = {},
  ): Promise<{ store: 'keychain' | 'file' | undefined; fallback?: string; leftInKeychain?: boolean }> {
    const before = this.environment(env);
    let store: 'keychain' | 'file' | undefined = value ? 'file' : undefined;
    let fallback: string | undefined;
    if (value && !opts.insecure && this.env.IMAGING_KEYCHAIN !== 'off') {
      try {
        keychainStore(keychainAccount(env, value.origin), value.token, this.env);
        store = 'keychain';
      } catch (err) {
        if (!(err instanceof KeychainUnavailable)) throw err;
        fallback = err.reason;
      }
    }
    // The keychain entry of the token being replaced or removed goes, unless it was just rewritten.
    let leftInKeychain = false;
    const oldAccount = keychainAccount(env, before.token_origin);
    if (
      before.token_store === 'keychain' &&
      !(store === 'keychain' && value && keychainAccount(env, value.origin) === oldAccount)
    ) {
      try {
        keychainRemove(oldAccount, this.env);
      } catch {
        leftInKeychain = true;
      }
    }
    await this.update((c) => {
      c.environments ??= {};
      const settings = (c.environments[env] ??= {});
      delete settings.token;
      delete settings.token_store;
      if (value) {
        if (store === 'keychain') settings.token_store = 'keychain';
        else settings.token = value.token;
        settings.token_origin = value.origin;
      } else {
        delete settings.token_origin;
      }
      also?.(settings);
    });
    this.keychainTokens.delete(env);
    return { store, ...(fallback ? { fallback } : {}), ...(leftInKeychain ? { leftInKeychain } : {}) };
  }
}

export function originOf(baseUrl: string): string {
  return new URL(baseUrl).origin;
}

/** The origin a stored token is bound to; a value that is no URL matches no base URL, so no token is sent. */
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
    if (settings.paths && Object.keys(settings.paths).length === 0) delete settings.paths;
    for (const k of Object.keys(settings) as (keyof EnvironmentSettings)[]) {
      if (settings[k] === undefined || settings[k] === '') delete settings[k];
    }
    if (Object.keys(settings).length === 0) delete envs[key];
  }
  if (Object.keys(envs).length === 0) delete config.environments;
}

export function maskToken(token: string): string {
  if (token.length <= 8) return '****';
  return `****${token.slice(-4)}`;
}
