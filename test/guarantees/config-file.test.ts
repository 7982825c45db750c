import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockFixture, run, spawnCli, tempDir, testServer } from '../helpers.js';

/**
 * Issue 9, items 10-13, recreated against the emulator: `imaging api` choosing POST silently (and
 * sending it to production unasked), mistakes that deserve a hint, `sso --open` losing the link
 * when the browser fails, and a hand-edited config that ended in "n.slice is not a function".
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

describe('imaging api: the method, said and confirmed (item 10)', () => {
  it('fields make it a POST, as in gh api, and stderr says so and why', async () => {
    const r = await run(['api', '/referrals', '-F', 'per_page=5'], { env: fx.env() });
    expect(fx.apiRequests()[0]!.method).toBe('POST');
    expect(r.stderr).toContain('Sending POST: fields make a request a POST, as in gh api');
    expect(r.stderr).toContain('imaging api GET /referrals');
    const get = await run(['api', 'GET', '/referrals', '-F', 'per_page=5'], { env: fx.env() });
    expect(get.code).toBe(0);
    expect(get.stderr).toBe('');
    expect(fx.apiRequests()[1]!.method).toBe('GET');
  });

  it.for(['GET', 'delete'])(
    '`imaging api %s` (a method, no path) is a usage error, nothing sent',
    async (m) => {
      const r = await run(['api', m], { env: fx.env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`"${m}" is an HTTP method: give the path after it`);
      expect(fx.apiRequests()).toHaveLength(0);
    },
  );

  it('an upper-case UUID in the path goes in lower case', async () => {
    const id = (
      JSON.parse((await run(['referrals', 'list', '--json'], { env: fx.env() })).stdout) as Array<{
        id: string;
      }>
    )[0]!.id;
    const r = await run(['api', `/referrals/${id.toUpperCase()}`], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).id).toBe(id);
  });

  describe('in production, any non-GET asks first', () => {
    const env = () => ({
      IMAGING_ENV: 'production',
      IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
      IMAGING_TOKEN: 'mock-prod',
      IMAGING_CONFIG_DIR: dir.path,
    });
    const argv = ['api', 'PATCH', '/referrals/x', '-f', 'note=hello'];

    it('refused without a terminal (exit 2), nothing sent', async () => {
      const r = await run(argv, { env: env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('imaging api PATCH in production needs confirmation');
      expect(r.stderr).toContain('--yes');
      expect(fx.apiRequests()).toHaveLength(0);
    });

    it('on a terminal: declined sends nothing; accepted or --yes sends', async () => {
      const asked: string[] = [];
      const prompter = (answer: boolean) => ({
        secret: async () => '',
        confirm: async (m: string) => {
          asked.push(m);
          return answer;
        },
      });
      const no = await run(argv, { env: env(), stdinIsTTY: true, deps: { prompter: prompter(false) } });
      expect(no.code).toBe(1);
      expect(no.stderr).toContain('Nothing was sent.');
      expect(asked[0]).toMatch(/^Send PATCH \/referrals\/x to PRODUCTION \(http:\/\/localhost:\d+\)\?$/);
      expect(fx.apiRequests()).toHaveLength(0);
      await run(argv, { env: env(), stdinIsTTY: true, deps: { prompter: prompter(true) } });
      expect(fx.apiRequests()).toHaveLength(1);
      await run([...argv, '--yes'], { env: env() });
      expect(fx.apiRequests()).toHaveLength(2);
      expect(asked).toHaveLength(2);
    });

    it('a GET is never asked about', async () => {
      const r = await run(['api', '/modalities'], { env: env() });
      expect(r.code).toBe(0);
      expect(fx.apiRequests()).toHaveLength(1);
    });
  });
});

describe('hints for common mistakes (item 11)', () => {
  it.for([['--secret', 's3cr3t-value'], ['--secret=s3cr3t-value']])(
    'webhook verify %s: the secret is never a flag, and is not echoed',
    async (flags) => {
      const r = await run(['webhook', 'verify', '--body', '-', ...flags], { env: fx.env(), stdin: '{}' });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('the webhook secret is never given as a flag');
      expect(r.stderr).toContain('--secret-file');
      expect(r.stderr).toContain('IMAGING_WEBHOOK_SECRET');
      expect(r.stderr).not.toContain('s3cr3t');
    },
  );

  it.for<[string[], string]>([
    [['mock', '--webhook-secret', 'abc'], '--webhook-secret-file FILE'],
    [['mock', '--port', '0', '--secret=abc'], '--webhook-secret-file FILE'],
    [['webhook', 'sign', '--webhook-secret', 'abc'], '--secret-file FILE'],
    [['--verbose', 'webhook', 'listen', '--secret', 'abc'], '--secret-file FILE'],
  ])('%j: the hint names the flag that command takes, and help lists it', async ([argv, flag]) => {
    const r = await run(argv, { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the webhook secret is never given as a flag');
    expect(r.stderr).toContain(`hint: Use ${flag}, or set IMAGING_WEBHOOK_SECRET`);
    expect(r.stderr).not.toContain('abc');
    const command = argv.filter((a) => /^[a-z]+$/.test(a)).slice(0, argv[0] === 'mock' ? 1 : 2);
    const help = await run([...command, '--help'], { env: fx.env() });
    expect(help.stdout).toContain(flag.replace(' FILE', ' <file>'));
  });

  it('a command that takes no secret: the hint says which commands do', async () => {
    const r = await run(['referrals', 'list', '--webhook-secret', 'abc'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'hint: Only the webhook commands (--secret-file FILE) and imaging mock (--webhook-secret-file FILE) take a secret',
    );
    expect(r.stderr).not.toContain('abc');
  });

  it('--base-url localhost:4010 suggests http://localhost:4010', async () => {
    const r = await run(['modalities', '--base-url', 'localhost:4010'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('hint: Did you mean http://localhost:4010?');
    const remote = await run(['modalities', '--base-url', 'api.example.com'], { env: fx.env() });
    expect(remote.stderr).toContain('hint: Did you mean https://api.example.com?');
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('--page 0 must be 1 or more', async () => {
    const r = await run(['icd10', 'knee', '--page', '0'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--page must be 1 or more, not 0.');
    expect(r.stderr).not.toContain('9007199254740991');
  });

  it('connection refused with --env local suggests imaging mock', async () => {
    const s = await testServer(() => {});
    await s.close(); // a port that was just ours and now refuses
    const r = await run(['modalities', '--env', 'local', '--base-url', s.url], {
      env: { IMAGING_CONFIG_DIR: dir.path },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: connection refused by ${s.url}`);
    expect(r.stderr).toContain(
      `hint: Nothing is listening there. For the local emulator, start it first: imaging mock --port ${s.port}`,
    );
  });
});

describe('sso --open prints the URL unless the browser confirmed (item 12)', () => {
  it.for([
    ['false', 'the browser command "false" exited with status 1'],
    ['/nonexistent/imaging-browser', 'the browser command "/nonexistent/imaging-browser" was not found'],
  ])('BROWSER=%s', async ([browser, reason]) => {
    const r = await run(['sso', '--open'], {
      env: fx.env({ BROWSER: browser, IMAGING_TOKEN: 'mock-sso-open' }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/portal\/sso\/\S+\n$/);
    expect(r.stderr).toContain(`The browser did not confirm it opened the page (${reason})`);
    expect(r.stderr).not.toContain('Opened the partner portal');
  });

  it('a browser that exits 0 opened it: the URL is not printed', async () => {
    // It reads the page it is given, as a browser does (the page is kept until then).
    const browser = join(dir.path, 'browser.sh');
    writeFileSync(browser, `#!/bin/sh\ncat "\${1#file://}" >/dev/null\n`, { mode: 0o700 });
    const r = await run(['sso', '--open'], {
      env: fx.env({ BROWSER: browser, IMAGING_TOKEN: 'mock-sso-open' }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Opened the partner portal');
  });
});

describe('a hand-edited config (item 13)', () => {
  const file = () => join(dir.path, 'config.json');
  const env = () => ({ IMAGING_CONFIG_DIR: dir.path });
  const cases: Array<[string, string, string[], number, string, string]> = [
    [
      '"token": 5',
      JSON.stringify({ environments: { sandbox: { token: 5, base_url: 'https://api.example.com' } } }),
      ['auth', 'status'],
      3,
      '"environments.sandbox.token" is a number, not text',
      'Run: imaging auth login   (it replaces the stored token)',
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
  ])('%s: exit 1 at once, naming the file', async (_name, make, message) => {
    make();
    const r = await spawnCli(['auth', 'status'], { env: { IMAGING_CONFIG_DIR: dir.path } });
    expect(r.exitCode).toBe(1);
    expect(r.timedOut).toBe(false);
    expect(String(r.stderr)).toMatch(message);
    expect(String(r.stderr)).toContain(cfg());
    expect(String(r.stderr)).not.toMatch(STACK);
  });
});

describe('config get path.* shows only a path the tool would use', () => {
  it('a hand-edited path with escapes is refused, never written raw', async () => {
    const dir = tempDir();
    try {
      writeFileSync(
        join(dir.path, 'config.json'),
        JSON.stringify({
          environments: { sandbox: { paths: { payments: '\u001b]0;PWNED\u0007//evil.example/{id}\u202e' } } },
        }),
      );
      const r = await run(['config', 'get', 'path.payments', '--env', 'sandbox'], {
        env: { IMAGING_CONFIG_DIR: dir.path },
      });
      // The config's check on read names the key (exit 1); config get's own check stands behind it.
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/environments\.sandbox\.paths\.payments/);
      expect(r.stderr).not.toMatch(/[\u001b\u0007\u202e]/);
    } finally {
      dir.cleanup();
    }
  });
});
