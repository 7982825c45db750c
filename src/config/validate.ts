import {
  exampleOf,
  OPERATION_NAMES,
  type Operation,
  parseOperationValue,
} from '../api/endpoints/operations.js';
import { normaliseBaseUrl } from '../api/url.js';
import { ENVIRONMENTS, type EnvironmentName, envArg } from './environments.js';

export interface EnvironmentSettings {
  base_url?: string;
  token?: string;
  /** The origin (scheme, host, port) the token was stored for; it is sent nowhere else. */
  token_origin?: string;
  token_store?: 'keychain';
  /** `path.<operation>`: `[METHOD] /api/v2/…`, see api/endpoints/operations.ts. */
  paths?: Partial<Record<Operation, string>>;
}

export interface StoredConfig {
  env?: EnvironmentName;
  environments?: Partial<Record<EnvironmentName, EnvironmentSettings>>;
}

export interface ConfigProblem {
  /** '' for the whole file. */
  key: string;
  problem: string;
  fix: string;
}

const kind = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'a list'
      : typeof v === 'object'
        ? 'an object'
        : typeof v === 'string'
          ? 'text'
          : `a ${typeof v}`;
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The usable part of a hand-editable config (keys of a wrong shape left out) and its problems. Keys
 * this version does not know are kept as they are (a newer one may have written them); no token is quoted.
 */
export function validateConfig(
  parsed: unknown,
  path: string,
): { config: StoredConfig; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const moveAside = `Move it aside and set up again: mv "${path}" "${path}.bak" && imaging auth login`;
  if (!isObject(parsed)) {
    problems.push({
      key: '',
      problem: `is ${kind(parsed)}, not a JSON object`,
      fix: moveAside,
    });
    return { config: {}, problems };
  }
  const config: Record<string, unknown> = { ...parsed };
  if ('env' in config) {
    const env = config.env;
    if (typeof env !== 'string' || !(ENVIRONMENTS as readonly string[]).includes(env.trim().toLowerCase())) {
      problems.push({
        key: 'env',
        problem: `is ${typeof env === 'string' ? JSON.stringify(env) : kind(env)}, not one of ${ENVIRONMENTS.join(', ')}`,
        fix: 'Run: imaging config unset env   (or: imaging config set env sandbox)',
      });
      delete config.env;
    }
  }
  if ('environments' in config) {
    const envs = config.environments;
    if (!isObject(envs)) {
      problems.push({ key: 'environments', problem: `is ${kind(envs)}, not an object`, fix: moveAside });
      delete config.environments;
    } else {
      const kept: Record<string, unknown> = { ...envs };
      for (const name of ENVIRONMENTS) {
        if (!(name in kept)) continue;
        const settings = checkEnvironment(name, kept[name], problems);
        if (settings === undefined) delete kept[name];
        else kept[name] = settings;
      }
      config.environments = kept;
    }
  }
  return { config: config as StoredConfig, problems };
}

function checkEnvironment(
  name: EnvironmentName,
  settings: unknown,
  problems: ConfigProblem[],
): Record<string, unknown> | undefined {
  const flag = envArg(name);
  const envArgs = envArg(name);
  const login = (why: string) => `Run: imaging auth login${flag}   (${why})`;
  const problem = (key: string, text: string, fix: string) =>
    problems.push({ key: `environments.${name}${key}`, problem: text, fix });
  if (!isObject(settings)) {
    problem('', `is ${kind(settings)}, not an object`, login(`it stores the ${name} settings again`));
    return undefined;
  }
  const s: Record<string, unknown> = { ...settings };
  const token = s.token;
  // A token without its origin, or an origin without its token, is no usable pair: both go.
  if ('token' in s && (typeof token !== 'string' || token.trim() === '')) {
    problem(
      '.token',
      typeof token === 'string' ? 'is empty' : `is ${kind(token)}, not text`,
      login('it replaces the stored token'),
    );
    delete s.token;
    delete s.token_origin;
  } else if ('token_origin' in s && typeof s.token_origin !== 'string') {
    problem(
      '.token_origin',
      `is ${kind(s.token_origin)}, not a URL`,
      login("it records the token's origin again"),
    );
    delete s.token;
    delete s.token_origin;
  }
  if ('token_store' in s && s.token_store !== 'keychain') {
    const value = typeof s.token_store === 'string' ? JSON.stringify(s.token_store) : kind(s.token_store);
    problem('.token_store', `is ${value}, not "keychain"`, login('it stores the token again'));
    delete s.token_store;
  }
  const badUrl =
    'base_url' in s &&
    textProblem(s.base_url, 'a URL', normaliseBaseUrl, (v) => `is ${JSON.stringify(v)}, not an http(s) URL`);
  if (badUrl) {
    problem(
      '.base_url',
      badUrl,
      `Run: imaging config set base-url https://…${envArgs}   (or: imaging config unset base-url${envArgs})`,
    );
    delete s.base_url;
  }
  if ('paths' in s) {
    if (isObject(s.paths)) s.paths = checkPaths(s.paths, envArgs, problem);
    else {
      problem(
        '.paths',
        `is ${kind(s.paths)}, not an object`,
        `Run: imaging config unset path.payments${envArgs}   (it removes the entry; then set each path again: imaging config set path.<operation> '[METHOD] /api/v2/…'${envArgs})`,
      );
      delete s.paths;
    }
  }
  return s;
}

function checkPaths(
  given: Record<string, unknown>,
  flag: string,
  problem: (key: string, text: string, fix: string) => void,
): Record<string, unknown> {
  const paths: Record<string, unknown> = { ...given };
  for (const k of OPERATION_NAMES) {
    const bad =
      k in paths &&
      textProblem(
        paths[k],
        'text',
        (v) => parseOperationValue(k, v),
        (v, err) => err.message.replace(`path.${k}: "${v}" `, ''),
      );
    if (!bad) continue;
    problem(
      `.paths.${k}`,
      bad,
      `Run: imaging config set path.${k} '${exampleOf(k)}'${flag}   (or: imaging config unset path.${k}${flag})`,
    );
    delete paths[k];
  }
  return paths;
}

/** Why `v` is not text that `check` accepts (it throws what `why` words), or undefined. */
function textProblem(
  v: unknown,
  what: string,
  check: (text: string) => unknown,
  why: (text: string, err: Error) => string,
): string | undefined {
  if (typeof v !== 'string') return `is ${kind(v)}, not ${what}`;
  try {
    check(v);
    return undefined;
  } catch (err) {
    return why(v, err as Error);
  }
}
