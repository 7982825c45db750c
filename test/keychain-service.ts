import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether a real Secret Service can be started here (gnome-keyring and a D-Bus session daemon). */
export function secretServiceMissing(): string | undefined {
  for (const tool of ['dbus-daemon', 'gnome-keyring-daemon']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed (apt-get install dbus gnome-keyring; .ci/run installs them)`;
    }
  }
  return undefined;
}

export interface SecretService {
  /** The environment a process needs to reach this service. */
  env: NodeJS.ProcessEnv;
  stop(): void;
}

/** A private D-Bus session with gnome-keyring's Secret Service, its login collection unlocked. */
export async function startSecretService(): Promise<SecretService> {
  const home = mkdtempSync(join(tmpdir(), 'imaging-keyring-'));
  const bus: ChildProcess = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const address = await new Promise<string>((resolve, reject) => {
    let text = '';
    bus.stdout!.on('data', (c: Buffer) => {
      text += c.toString();
      if (text.includes('\n')) resolve(text.trim().split('\n')[0]!);
    });
    bus.on('exit', () => reject(new Error('dbus-daemon stopped')));
  });
  const env = {
    ...process.env,
    HOME: home,
    XDG_DATA_HOME: join(home, 'data'),
    XDG_RUNTIME_DIR: home,
    DBUS_SESSION_BUS_ADDRESS: address,
    IMAGING_KEYCHAIN: '',
  };
  // A child of this process, its password in a file on its standard input (there from the start).
  const password = join(home, 'password');
  writeFileSync(password, 'test-password\n', { mode: 0o600 });
  const input = openSync(password, 'r');
  const keyring = spawn('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets'], {
    env,
    stdio: [input, 'ignore', 'ignore'],
  });
  closeSync(input);
  const stop = () => {
    keyring.kill();
    bus.kill();
    rmSync(home, { recursive: true, force: true });
  };
  try {
    await loginUnlocked(env, join(home, 'data', 'keyrings', 'login.keyring'));
  } catch (err) {
    stop(); // a set-up that failed leaves no bus or daemon behind
    throw err;
  }
  return { env, stop };
}

/**
 * The daemon answers on D-Bus before it has made its login collection from the password: a request in
 * between makes it locked for good ("unlock prompt was dismissed", with no prompter here). Nothing is
 * asked until the collection's file is written; then it must say it is unlocked.
 */
async function loginUnlocked(env: NodeJS.ProcessEnv, file: string): Promise<void> {
  const ask = [
    '--session',
    '--print-reply',
    '--dest=org.freedesktop.secrets',
    '/org/freedesktop/secrets/collection/login',
    'org.freedesktop.DBus.Properties.Get',
    'string:org.freedesktop.Secret.Collection',
    'string:Locked',
  ];
  for (let i = 0; i < 200; i++) {
    if (existsSync(file)) {
      try {
        if (/boolean false/.test(execFileSync('dbus-send', ask, { env, encoding: 'utf8', stdio: 'pipe' })))
          return;
      } catch {
        // not on the bus yet
      }
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the test Secret Service never unlocked its login collection');
}
