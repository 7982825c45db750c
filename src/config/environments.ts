import { UsageError } from '../errors.js';

export const ENVIRONMENTS = ['sandbox', 'production', 'local'] as const;
export type EnvironmentName = (typeof ENVIRONMENTS)[number];

const LOCAL_BASE_URL = 'http://127.0.0.1:4010';

/** The emulator's documented token, no secret: `local` uses it when none is configured. */
export const MOCK_TOKEN = 'mock-token';

/** No real token starts so: these may go to a loopback port any local user could have bound. */
const EMULATOR_TOKEN_PREFIX = 'mock-';

export function isEmulatorToken(token: string): boolean {
  return token.startsWith(EMULATOR_TOKEN_PREFIX);
}

/** The words that name `env` in a suggested command: none for the default, sandbox. */

/**
 * `--env E` always, in a command a hint suggests: without it the command acts on the stored default
 * environment (`config set env`), which may not be the one meant.
 */
export const envArg = (env: string): string => ` --env ${env}`;

export function defaultBaseUrl(env: EnvironmentName): string | undefined {
  return env === 'local' ? LOCAL_BASE_URL : undefined;
}

export function parseEnvironment(value: string, source = '--env'): EnvironmentName {
  const v = value.trim().toLowerCase();
  if ((ENVIRONMENTS as readonly string[]).includes(v)) return v as EnvironmentName;
  throw new UsageError(
    `${source}: unknown environment "${value}"`,
    `Use one of: ${ENVIRONMENTS.join(', ')}.`,
  );
}
