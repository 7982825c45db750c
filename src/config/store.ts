import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { CliError, ExitCode } from '../errors.js';
import { num } from '../util/plural.js';
import type { EnvironmentName } from './environments.js';
import { CONFIG_FILE_NAME, configDir } from './paths.js';
import { type ConfigProblem, validateConfig } from './validate.js';

export interface EnvironmentSettings {
  base_url?: string;
  token?: string;
  /** The origin (scheme, host, port) the token was stored for; it is sent nowhere else. */
  token_origin?: string;
  /** Paths the API does not publish, set per environment (`config set path.payments …`). */
  paths?: { payments?: string; notifications?: string };
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
/** A config larger than this is no config of ours (a device, a runaway file): refused, never read whole. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/**
 * The config file's text: only a regular file is read (a FIFO, a device or a folder in its place is
 * refused at once: opened without blocking, checked before any read, so a FIFO with no writer or
 * /dev/zero can neither hang nor fill memory), and only up to MAX_CONFIG_BYTES.
 */
function readConfigText(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      const what = st.isDirectory()
        ? 'a folder'
        : st.isFIFO()
          ? 'a named pipe (FIFO)'
          : st.isCharacterDevice() || st.isBlockDevice()
            ? 'a device'
            : 'not a regular file';
      throw new CliError(
        `the config file ${path} is ${what}, not a file`,
        ExitCode.failure,
        'Move it aside; the next auth login or config set writes a new one.',
      );
    }
    if (st.size > MAX_CONFIG_BYTES)
      throw new CliError(
        `the config file ${path} is ${num(st.size)} bytes: no config is that large`,
        ExitCode.failure,
        'Move it aside; the next auth login or config set writes a new one.',
      );
    const buf = Buffer.alloc(Math.min(st.size, MAX_CONFIG_BYTES) + 1);
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
      if (got === buf.length) break; // grew while read: what fits (the JSON check refuses a cut file)
    }
    return buf.toString('utf8', 0, got);
  } finally {
    closeSync(fd);
  }
}

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
      text = readConfigText(this.path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return (this.cache = {});
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
    if (this.lenient) this.leftOut = problems;
    this.cache = config;
    return this.cache;
  }

  /**
   * For the commands that repair a config (auth login/logout, config set/unset): keys of the
   * wrong shape are left out of what they read, so that what they write is whole again.
   */
  lenient = false;

  /** What a lenient read left out as unusable: said (through `report`) once the repaired config is written. */
  private leftOut: ConfigProblem[] = [];
  private report: ((line: string) => void) | undefined;

  /**
   * Reads leniently (see `lenient`), and says through `report` (stderr) what it left out, once a
   * write has removed it from the file: nothing of a hand-edited config is dropped without a word.
   */
  repair(report: (line: string) => void): void {
    this.lenient = true;
    this.report = report;
  }

  /** The dotted keys the lenient read left out as unusable ('' for the whole file). */
  get unusable(): string[] {
    this.read();
    return this.leftOut.map((p) => p.key);
  }

  /** Says what the write just removed, once. */
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
    this.sayRemoved();
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
    this.sayRemoved();
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
    if (settings.paths && Object.keys(settings.paths).length === 0) delete settings.paths;
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
