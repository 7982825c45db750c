import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { STANDALONE } from '../version.js';

// Tokens in the OS keychain through @napi-rs/keyring, each call in a child process (the library
// blocks on D-Bus; only a child can be killed when it never answers); the token goes by pipe, never argv.

const SERVICE = 'imaging';
export const KEYCHAIN_TIMEOUT_MS = 3000;

/** How long a keychain call may take: IMAGING_KEYCHAIN_TIMEOUT (seconds) for a slow unlock prompt. */
function keychainTimeoutMs(env: NodeJS.ProcessEnv): number {
  const s = Number(env.IMAGING_KEYCHAIN_TIMEOUT);
  return Number.isFinite(s) && s > 0 && s <= 600 ? Math.round(s * 1000) : KEYCHAIN_TIMEOUT_MS;
}

export class KeychainUnavailable extends Error {
  constructor(
    readonly reason: string,
    readonly timedOut = false,
  ) {
    super(reason);
  }
}

// Runs in the child: `node -e CHILD op service account library`, the secret on stdin.
const CHILD = `
const [op, service, account, library] = process.argv.slice(1);
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c)).on('end', () => {
  let answer;
  try {
    const entry = new (require(library).Entry)(service, account);
    if (op === 'get') answer = { value: entry.getPassword() };
    else if (op === 'set') answer = { value: (entry.setPassword(Buffer.concat(chunks).toString('utf8')), true) };
    else answer = { value: entry.deleteCredential() };
  } catch (err) {
    answer = { error: String((err && err.message) || err) };
  }
  process.stdout.write(JSON.stringify(answer));
});`;

/**
 * The keychain's native addon, from the platform's @napi-rs/keyring-<platform> package, looked for
 * only in this package's node_modules and the node_modules holding this package. The library's own
 * loader tries a dozen platform packages in a try, each of which Node would look for in every
 * parent folder, where anyone may have put one.
 */
function libraryPath(): string {
  let root = typeof __dirname === 'string' ? __dirname : process.cwd();
  // This package's folder: the nearest holding a package.json (dist/ and src/config/ have none).
  while (!existsSync(join(root, 'package.json')) && dirname(root) !== root) root = dirname(root);
  const folders = [join(root, 'node_modules')];
  if (basename(dirname(root)) === 'node_modules') folders.push(dirname(root));
  for (const platform of addonPlatforms())
    for (const folder of folders) {
      const file = join(folder, '@napi-rs', `keyring-${platform}`, `keyring.${platform}.node`);
      if (existsSync(file)) return file;
    }
  throw new KeychainUnavailable('the keychain library is not installed for this platform');
}

/** @napi-rs/keyring's names for this platform (npm installs only the one matching the C library). */
function addonPlatforms(): string[] {
  const { platform, arch } = process;
  if (platform === 'linux') return [`linux-${arch}-gnu`, `linux-${arch}-musl`];
  if (platform === 'win32') return [`win32-${arch}-msvc`];
  return [`${platform}-${arch}`];
}

/** One keychain call in a child process, synchronously, killed when the time is up. */
function call(op: 'get' | 'set' | 'delete', account: string, env: NodeJS.ProcessEnv, secret = ''): unknown {
  if (env.IMAGING_KEYCHAIN === 'off') throw new KeychainUnavailable('IMAGING_KEYCHAIN=off');
  // The single executable answers as its own helper (src/config/keychain-child.ts): it has no `-e`.
  const argv = STANDALONE
    ? ['__keychain', op, SERVICE, account]
    : ['-e', CHILD, op, SERVICE, account, libraryPath()];
  const child = spawnSync(process.execPath, argv, {
    env,
    input: secret,
    stdio: ['pipe', 'pipe', 'ignore'],
    timeout: keychainTimeoutMs(env),
    killSignal: 'SIGKILL',
    maxBuffer: 1024 * 1024,
  });
  if ((child.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT')
    throw new KeychainUnavailable(
      `the OS keychain did not answer within ${keychainTimeoutMs(env) / 1000} s`,
      true,
    );
  let answer: { value?: unknown; error?: string };
  try {
    answer = JSON.parse(child.stdout.toString('utf8'));
  } catch {
    throw new KeychainUnavailable(
      `the keychain helper stopped (exit ${child.status ?? child.signal ?? 'unknown'})`,
    );
  }
  if (answer.error !== undefined) throw new KeychainUnavailable(answer.error);
  return answer.value;
}

export function keychainAccount(env: string, origin: string | undefined): string {
  return origin ? `${env} ${origin}` : env;
}

export function keychainStore(account: string, token: string, env: NodeJS.ProcessEnv): void {
  call('set', account, env, token);
}

export function keychainRead(account: string, env: NodeJS.ProcessEnv): string | null {
  const value = call('get', account, env);
  return typeof value === 'string' ? value : null;
}

export function keychainRemove(account: string, env: NodeJS.ProcessEnv): boolean {
  return call('delete', account, env) === true;
}
