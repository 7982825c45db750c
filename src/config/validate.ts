import { checkRecordPath, RECORD_KINDS } from '../api/endpoints/referral-records.js';
import { normaliseBaseUrl } from '../api/url.js';
import { ENVIRONMENTS, type EnvironmentName } from './environments.js';

export interface EnvironmentSettings {
  base_url?: string;
  token?: string;
  /** The origin (scheme, host, port) the token was stored for; it is sent nowhere else. */
  token_origin?: string;
  /** Set when the token is kept in the OS keychain instead of in `token`. */
  token_store?: 'keychain';
  /** Paths the API does not publish, set per environment (`config set path.payments …`). */
  paths?: { payments?: string; notifications?: string };
}

export interface StoredConfig {
  env?: EnvironmentName;
  environments?: Partial<Record<EnvironmentName, EnvironmentSettings>>;
}

/** One thing wrong in a hand-edited config file: which key, what is wrong, what to run. */
export interface ConfigProblem {
  /** The dotted key (`environments.sandbox.token`), or '' for the whole file. */
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
 * Checks the shape of the config file as read (`JSON.parse` of a file anyone may edit by hand)
 * and returns what is usable (the keys with a wrong shape left out) with the problems found.
 * Keys this version does not know are kept and not checked: a newer version may have written them.
 * A token is never quoted, only its type.
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
        const flag = name === 'sandbox' ? '' : ` --env ${name}`;
        const settings = kept[name];
        if (!isObject(settings)) {
          problems.push({
            key: `environments.${name}`,
            problem: `is ${kind(settings)}, not an object`,
            fix: `Run: imaging auth login${flag}   (it stores the ${name} settings again)`,
          });
          delete kept[name];
          continue;
        }
        const s: Record<string, unknown> = { ...settings };
        if ('token' in s && (typeof s.token !== 'string' || s.token.trim() === '')) {
          problems.push({
            key: `environments.${name}.token`,
            problem: typeof s.token === 'string' ? 'is empty' : `is ${kind(s.token)}, not text`,
            fix: `Run: imaging auth login${flag}   (it replaces the stored token)`,
          });
          delete s.token;
          delete s.token_origin;
        }
        if ('token_origin' in s && typeof s.token_origin !== 'string') {
          problems.push({
            key: `environments.${name}.token_origin`,
            problem: `is ${kind(s.token_origin)}, not a URL`,
            fix: `Run: imaging auth login${flag}   (it records the token's origin again)`,
          });
          delete s.token;
          delete s.token_origin;
        }
        if ('token_store' in s && s.token_store !== 'keychain') {
          problems.push({
            key: `environments.${name}.token_store`,
            problem: `is ${typeof s.token_store === 'string' ? JSON.stringify(s.token_store) : kind(s.token_store)}, not "keychain"`,
            fix: `Run: imaging auth login${flag}   (it stores the token again)`,
          });
          delete s.token_store;
        }
        if ('base_url' in s) {
          let bad: string | undefined;
          if (typeof s.base_url !== 'string') bad = `is ${kind(s.base_url)}, not a URL`;
          else
            try {
              normaliseBaseUrl(s.base_url);
            } catch {
              bad = `is ${JSON.stringify(s.base_url)}, not an http(s) URL`;
            }
          if (bad) {
            problems.push({
              key: `environments.${name}.base_url`,
              problem: bad,
              fix: `Run: imaging config set base-url https://…${flag}   (or: imaging config unset base-url${flag})`,
            });
            delete s.base_url;
          }
        }
        if ('paths' in s) {
          if (!isObject(s.paths)) {
            problems.push({
              key: `environments.${name}.paths`,
              problem: `is ${kind(s.paths)}, not an object`,
              fix: `Run: imaging config unset path.payments${flag} && imaging config unset path.notifications${flag}`,
            });
            delete s.paths;
          } else {
            const paths: Record<string, unknown> = { ...s.paths };
            for (const k of RECORD_KINDS) {
              if (!(k in paths)) continue;
              const v = paths[k];
              let bad: string | undefined;
              if (typeof v !== 'string') bad = `is ${kind(v)}, not text`;
              else
                try {
                  checkRecordPath(k, v);
                } catch (err) {
                  bad = (err as Error).message.replace(`path.${k}: "${v}" `, '');
                }
              if (bad) {
                problems.push({
                  key: `environments.${name}.paths.${k}`,
                  problem: bad,
                  fix: `Run: imaging config set path.${k} '/api/v2/…/{id}/…'${flag}   (or: imaging config unset path.${k}${flag})`,
                });
                delete paths[k];
              }
            }
            s.paths = paths;
          }
        }
        kept[name] = s;
      }
      config.environments = kept;
    }
  }
  return { config: config as StoredConfig, problems };
}
