import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cli, mockFixture, run, spawnCli, tempDir } from '../helpers.js';

/**
 * A hand-edited, damaged or non-file config is repaired or refused with one error naming the file
 * and key, never a crash ("n.slice is not a function"), recreated against the emulator.
 */

const fx = mockFixture({ referrals: 20 });

let dir: ReturnType<typeof tempDir>;

const STACK = /\n\s+at .+:\d+:\d+/;

beforeAll(async () => {
  await fx.start();
});

afterAll(async () => {
  await fx.stop();
});

beforeEach(() => {
  dir = tempDir();
  fx.reset();
});

afterEach(() => dir.cleanup());

describe('a hand-edited config', () => {
  const file = () => join(dir.path, 'config.json');
  const env = () => ({ IMAGING_CONFIG_DIR: dir.path });
  const cases: Array<[string, string, string[], number, string, string]> = [
    [
      '"token": 5',
      JSON.stringify({ environments: { sandbox: { token: 5, base_url: 'https://api.example.com' } } }),
      ['auth', 'status'],
      3,
      '"environments.sandbox.token" is a number, not text',
      'Run: imaging auth login --env sandbox   (it replaces the stored token)',
    ],
    ['an array', '[1, 2]', ['auth', 'status'], 1, 'the file is a list, not a JSON object', 'mv "'],
    [
      'a string',
      '"sandbox"',
      ['cpt', '73721'],
      1,
      'the file is text, not a JSON object',
      'imaging auth login',
    ],
    [
      'a bad base-url',
      JSON.stringify({ environments: { local: { base_url: 'localhost:4010' } } }),
      ['--env', 'local', 'modalities'],
      1,
      '"environments.local.base_url" is "localhost:4010", not an http(s) URL',
      'Run: imaging config set base-url https://… --env local',
    ],
    [
      'an unknown env',
      JSON.stringify({ env: 'prod' }),
      ['modalities'],
      1,
      '"env" is "prod", not one of sandbox, production, local',
      'Run: imaging config unset env',
    ],
  ];
  for (const [name, text, argv, code, problem, fix] of cases) {
    it(`${name}: names the file, the key and the fix; no stack even with --verbose`, async () => {
      writeFileSync(file(), text);
      for (const extra of [[], ['--verbose']]) {
        const r = await run([...argv, ...extra], { env: env() });
        expect(r.code).toBe(code);
        expect(r.stderr).toContain(`error: the config file ${file()} is not usable: ${problem}`);
        expect(r.stderr).toMatch(new RegExp(`hint: .*${fix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
        expect(r.stderr).not.toMatch(STACK);
        expect(r.stderr).not.toContain('is not a function');
      }
    });
  }

  it('what the hint says to run repairs it', async () => {
    writeFileSync(
      file(),
      JSON.stringify({
        env: 'prod',
        environments: { sandbox: { token: 5, base_url: 'https://api.example.com' } },
      }),
    );
    expect((await run(['config', 'unset', 'env'], { env: env() })).code).toBe(0);
    const login = await run(['auth', 'login', '--with-token', '--no-verify'], {
      env: env(),
      stdin: 'tok_abcdef123456\n',
    });
    expect(login.code).toBe(0);
    const stored = JSON.parse(readFileSync(file(), 'utf8'));
    expect(stored.environments.sandbox).toMatchObject({
      token: 'tok_abcdef123456',
      base_url: 'https://api.example.com',
    });
    const status = await run(['auth', 'status'], { env: env() });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('****3456');
  });
});

describe('repairing a hand-edited config says what it removed', () => {
  // Seen: `config unset path.payments` (sandbox) silently dropped production's bad path, `config
  // unset base-url --env sandbox` production's `token: 5`, and `auth logout` left `token: 5` in place
  // ("No token is stored; nothing to do").
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());
  const file = () => join(dir.path, 'config.json');
  const env = () => ({ IMAGING_CONFIG_DIR: dir.path });
  const stored = () => JSON.parse(readFileSync(file(), 'utf8'));

  it.for<[string, unknown, string[], string]>([
    [
      'config unset path.payments (sandbox), production.paths.payments: 5',
      {
        environments: {
          production: { paths: { payments: 5 } },
          sandbox: { paths: { payments: '/api/v2/referrals/{id}/payments' } },
        },
      },
      ['config', 'unset', 'path.payments'],
      'environments.production.paths.payments (a number, not text)',
    ],
    [
      'config unset base-url --env sandbox, production.token: 5',
      { environments: { production: { token: 5 }, sandbox: { base_url: 'https://api.example.com' } } },
      ['config', 'unset', 'base-url', '--env', 'sandbox'],
      'environments.production.token (a number, not text)',
    ],
    [
      'config set env production, env: 7',
      { env: 7 },
      ['config', 'set', 'env', 'production'],
      'env (a number, not one of sandbox, production, local)',
    ],
  ])('%s: removed, and stderr names it', async ([, config, argv, item]) => {
    writeFileSync(file(), JSON.stringify(config));
    const r = await run(argv, { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `warning: in the config file ${file()}, this value was not usable and was removed: ${item}`,
    );
    const key = item.split(' ')[0]!;
    let v: unknown = stored();
    for (const part of key.split('.')) v = (v as Record<string, unknown> | undefined)?.[part];
    expect(v === undefined || typeof v === 'string').toBe(true);
    // Nothing left empty behind it.
    expect(JSON.stringify(stored())).not.toContain(':{}');
  });

  it('two at once are both named; a usable config says nothing', async () => {
    writeFileSync(
      file(),
      JSON.stringify({ environments: { production: { token: 5, base_url: 'x' }, local: { paths: 3 } } }),
    );
    const r = await run(['config', 'set', 'env', 'local'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /3 values were not usable and were removed: .*environments\.production\.token .*environments\.production\.base_url .*environments\.local\.paths /,
    );
    const again = await run(['config', 'set', 'env', 'sandbox'], { env: env() });
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('warning');
  });

  it('auth logout with "token": 5 removes it and says so', async () => {
    writeFileSync(
      file(),
      JSON.stringify({ environments: { sandbox: { token: 5, base_url: 'https://api.example.com' } } }),
    );
    const r = await run(['auth', 'logout'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('nothing to do');
    expect(r.stderr).toContain('environments.sandbox.token (a number, not text)');
    expect(r.stderr).toContain('Logged out of sandbox: the stored token, which was not usable, was removed.');
    expect(stored()).toEqual({ environments: { sandbox: { base_url: 'https://api.example.com' } } });
    const status = await run(['auth', 'status'], { env: env() });
    expect(status.stderr).not.toContain('not usable');
  });
});

describe('a config file that is no file', () => {
  // Seen: a FIFO at config.json hung every command for good (Ctrl-C and SIGTERM ignored, a blocking
  // read), and one pointing at a /dev/zero-like device filled 3.2 GB. Each is refused at once.
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());
  const cfg = () => join(dir.path, 'config.json');
  it.each([
    ['a FIFO with no writer', () => execFileSync('mkfifo', [cfg()]), /is a named pipe \(FIFO\), not a file/],
    [
      'a symlink to a zero device of our own',
      () => {
        execFileSync('mknod', [join(dir.path, 'zero'), 'c', '1', '5']);
        symlinkSync(join(dir.path, 'zero'), cfg());
      },
      /is a symlink, which is never followed/,
    ],
    ['a folder', () => mkdirSync(cfg()), /is a folder, not a file/],
  ])('%s: exit 1 at once, naming the file', async (name, make, message) => {
    make();
    // The real binary where a regression would hang or fill a process (a blocking open, an endless
    // read); a folder in-process.
    const real = name !== 'a folder';
    const r = real
      ? await spawnCli(['auth', 'status'], { env: { IMAGING_CONFIG_DIR: dir.path } })
      : {
          ...(await cli(false, ['auth', 'status'], { env: { IMAGING_CONFIG_DIR: dir.path } })),
          timedOut: false,
        };
    expect(r.exitCode).toBe(1);
    expect(r.timedOut).toBe(false);
    expect(String(r.stderr)).toMatch(message);
    expect(String(r.stderr)).toContain(cfg());
    expect(String(r.stderr)).not.toMatch(STACK);
  });
});

describe('a config folder that is no folder', () => {
  it('IMAGING_CONFIG_DIR naming a file: exit 1 naming it, never a config taken as empty', async () => {
    const file = join(dir.path, 'not-a-folder');
    writeFileSync(file, '');
    const r = await run(['--env', 'local', 'cpt', '73721'], { env: { IMAGING_CONFIG_DIR: file } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: the config folder ${file} is a file, not a folder`);
    expect(r.stderr).toContain('hint: Point IMAGING_CONFIG_DIR at a folder');
  });
});

describe('a config file holding a token that other users can read', () => {
  it('warns once, naming the file and chmod 600, when the token is used; a 0600 file says nothing', async () => {
    // The emulator's own token, stored for local: read from the file as any stored token is.
    const config = { environments: { local: { token: 'mock-token', base_url: fx.mock.url } } };
    const file = join(dir.path, 'config.json');
    writeFileSync(file, JSON.stringify(config), { mode: 0o644 });
    chmodSync(file, 0o644);
    const env = { IMAGING_CONFIG_DIR: dir.path, IMAGING_ENV: 'local' };
    const open = await run(['modalities', '--no-cache'], { env });
    expect(open.code).toBe(0);
    expect(open.stderr.match(/can be read by other users/g)).toHaveLength(1);
    expect(open.stderr).toContain(`run chmod 600 "${file}"`);
    // Whichever environment is used, and for config list too: another environment's token is exposed as well.
    const prod = {
      environments: { production: { token: 'prod-token-value-1234', base_url: 'https://api.example.com' } },
    };
    writeFileSync(file, JSON.stringify(prod));
    chmodSync(file, 0o640);
    for (const argv of [
      ['config', 'list'],
      ['--env', 'local', 'modalities', '--no-cache'],
    ]) {
      const r = await run(argv, { env: { IMAGING_CONFIG_DIR: dir.path } });
      expect(
        r.stderr.match(/can be read by other users \(mode 640\) and holds the production token/g),
        argv.join(' '),
      ).toHaveLength(1);
      expect(r.stderr).not.toContain('prod-token-value-1234');
    }
    chmodSync(file, 0o600);
    const closed = await run(['modalities', '--no-cache'], { env });
    expect(closed.stderr).not.toMatch(/other users/);
  });
});
