import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { getAsset } from 'node:sea';
import { privateFolder } from '../cache/folder.js';
import { writeFileAtomic } from '../fs/write-file.js';

// The standalone binary's keychain helper: `imaging __keychain OP SERVICE ACCOUNT`, the secret on
// stdin, one JSON answer on stdout, run by keychain.ts in a child process as the npm package runs
// its `node -e` script. The binary carries @napi-rs/keyring's native addon as the asset
// `keyring.node`; Node loads an addon only from a file, so it is written once, named by its
// SHA-256, into a folder of yours (the private cache folder `native`, 0700; on Windows
// %LOCALAPPDATA%\imaging\native), and checked against the asset before every load.

interface KeyringEntry {
  getPassword(): string | null;
  setPassword(secret: string): void;
  deleteCredential(): boolean;
}

function nativeFolder(env: NodeJS.ProcessEnv): string {
  if (process.platform === 'win32') {
    const base = env.LOCALAPPDATA;
    if (!base || !isAbsolute(base)) throw new Error('LOCALAPPDATA is not set');
    const dir = join(base, 'imaging', 'native');
    mkdirSync(dir, { recursive: true });
    return dir;
  }
  const folder = privateFolder(env, true, 'native');
  if ('problem' in folder) throw new Error(`no private folder for the keychain library: ${folder.problem}`);
  return folder.dir;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The addon's file, written from the asset unless the same bytes are there already. */
function addonFile(env: NodeJS.ProcessEnv): string {
  let bytes: Buffer;
  try {
    bytes = Buffer.from(getAsset('keyring.node'));
  } catch {
    throw new Error('this binary carries no keychain library');
  }
  const sum = sha256(bytes);
  const file = join(nativeFolder(env), `keyring-${sum.slice(0, 16)}.node`);
  let have: Buffer | undefined;
  try {
    have = readFileSync(file);
  } catch {
    // not written yet
  }
  if (!have || sha256(have) !== sum) writeFileAtomic(file, bytes);
  return file;
}

function answer(op: string, service: string, account: string, secret: string): unknown {
  const module = { exports: {} as { Entry: new (service: string, account: string) => KeyringEntry } };
  process.dlopen(module, addonFile(process.env));
  const entry = new module.exports.Entry(service, account);
  if (op === 'get') return entry.getPassword();
  if (op === 'set') {
    entry.setPassword(secret);
    return true;
  }
  return entry.deleteCredential();
}

export function keychainChild([op = '', service = '', account = '']: readonly string[]): void {
  // Its answer is a token, for keychain.ts's pipe: never to a terminal, as `auth token` refuses one.
  if (process.stdout.isTTY) {
    process.stderr.write("error: __keychain is imaging's own helper and answers only to a pipe\n");
    process.exitCode = 2;
    return;
  }
  const chunks: Buffer[] = [];
  process.stdin
    .on('data', (c: Buffer) => chunks.push(c))
    .on('end', () => {
      let reply: { value?: unknown; error?: string };
      try {
        reply = { value: answer(op, service, account, Buffer.concat(chunks).toString('utf8')) };
      } catch (err) {
        reply = { error: String((err as Error | undefined)?.message ?? err) };
      }
      process.stdout.write(JSON.stringify(reply));
    });
}
