import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, piped } from '../fake-io.js';
import { mockFixture, run, tempDir } from '../helpers.js';

const fx = mockFixture();
let dir: ReturnType<typeof tempDir>;
beforeAll(async () => {
  await fx.start();
  dir = tempDir();
});
afterAll(async () => {
  await fx.stop();
  dir.cleanup();
});

/** A $BROWSER that records its arguments and what it found at the page it was given, as a browser reads it. */
function browser(
  name: string,
  last = '',
): { command: string; argv: () => string[]; seen: (what: string) => string } {
  const out = join(dir.path, name);
  const command = join(dir.path, `${name}.sh`);
  writeFileSync(
    command,
    `#!/bin/sh
printf '%s\\n' "$@" > '${out}.argv'
f="\${1#file://}"
stat -c %a "$f" > '${out}.mode'
stat -c %a "$(dirname "$f")" > '${out}.dirmode'
cat "$f" > '${out}.page'
${last}
`,
  );
  chmodSync(command, 0o700);
  return {
    command,
    argv: () => readFileSync(`${out}.argv`, 'utf8').trim().split('\n'),
    seen: (what) => readFileSync(`${out}.${what}`, 'utf8').trim(),
  };
}

describe('sso --open', () => {
  it('gives the browser command a private redirect page, never the one-time URL, and removes the page', async () => {
    const b = browser('reads');
    const r = await run(['sso', '--open'], {
      env: fx.env({ IMAGING_TOKEN: 'mock-sso-open', BROWSER: b.command }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Opened the partner portal');
    // What `ps` shows of the browser command: a file in a private folder, no portal URL.
    const argv = b.argv();
    expect(argv).toHaveLength(1);
    expect(argv[0]).toMatch(/^file:\/\/\/.+\/imaging-open-[^/]+\/portal\.html$/);
    expect(argv.join(' ')).not.toContain('/portal/sso/');
    expect(b.seen('mode')).toBe('600');
    expect(b.seen('dirmode')).toBe('700');
    // The page sends the browser on to the portal URL, which still works (once).
    const target = /content="0; url=([^"]+)"/.exec(b.seen('page'))?.[1] ?? '';
    expect(target).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/portal\/sso\/[\w-]+$/);
    expect((await fetch(target)).status).toBe(200);
    // Gone once read: nothing of the URL stays on disk.
    expect(existsSync(argv[0]!.slice('file://'.length))).toBe(false);
  });

  it('removes the page at once and prints the URL when the browser command fails', async () => {
    const b = browser('fails', 'exit 3');
    const r = await run(['sso', '--open'], {
      env: fx.env({ IMAGING_TOKEN: 'mock-sso-fail', BROWSER: b.command }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\/portal\/sso\//);
    expect(r.stderr).toContain('exited with status 3');
    expect(b.seen('mode')).toBe('600');
    expect(existsSync(b.argv()[0]!.slice('file://'.length))).toBe(false);
  });
});

describe('imaging sso', () => {
  beforeEach(() => fx.reset());

  it('prints a one-time portal URL alone on stdout, in both forms, each run a new one', async () => {
    const { terminal, piped: p } = await bothForms(['sso'], { env: fx.env() });
    const url = new RegExp(`^${fx.mock.url.replace(/[.]/g, '\\.')}/portal/sso/[A-Za-z0-9_-]{20,}\\n$`);
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(url);
    }
    expect(terminal.stdout).not.toBe(p.stdout);
    expect(p.stderr).toBe('');
  });

  it('gives the URL as JSON', async () => {
    const r = await piped(['sso', '--json'], { env: fx.env() });
    expect(JSON.parse(r.stdout).url).toMatch(/\/portal\/sso\//);
  });

  it('takes no argument', async () => {
    expectUsageError(await piped(['sso', 'now'], { env: fx.env() }), /argument/, fx.apiRequests().length);
  });
});

describe('imaging sso, its usage errors', () => {
  const fx = mockFixture({ allowance: 3 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  beforeEach(() => fx.reset());

  describe('sso', () => {
    it('prints the one-time URL and nothing else on stdout', async () => {
      const r = await run(['sso'], { env: fx.env({ IMAGING_TOKEN: 'mock-sso-1' }) });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/portal\/sso\/[A-Za-z0-9_-]+\n$/);
      expect(r.stderr).toBe('');
      expect(fx.apiRequests()).toEqual([
        expect.objectContaining({ method: 'POST', path: '/api/v2/auth/sso' }),
      ]);
    });

    it('--open launches the browser and keeps the URL off stdout', async () => {
      const opened: string[] = [];
      const r = await run(['sso', '--open'], {
        env: fx.env({ IMAGING_TOKEN: 'mock-sso-2' }),
        deps: {
          openUrl: async (u) => {
            opened.push(u);
            return true;
          },
        },
      });
      expect(r.code).toBe(0);
      expect(opened).toHaveLength(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('Opened the partner portal');
    });

    it('--open on a machine without a browser prints the URL with a note', async () => {
      const r = await run(['sso', '--open'], {
        env: fx.env({ IMAGING_TOKEN: 'mock-sso-3' }),
        deps: { openUrl: async () => false },
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/\/portal\/sso\//);
      expect(r.stderr).toContain('The browser did not confirm it opened the page');
    });

    it('keeps the URL out of the --verbose trace', async () => {
      const r = await run(['sso', '--verbose'], { env: fx.env({ IMAGING_TOKEN: 'mock-sso-4' }) });
      const url = r.stdout.trim();
      expect(r.stderr).toContain('> POST ');
      expect(r.stderr).toMatch(/< 200 OK \d+ ms request-id=req_/);
      expect(r.stderr).not.toContain(url.split('/').pop());
    });
  });

  describe('usage errors', () => {
    it('suggests the command meant', async () => {
      const r = await run(['cpd', '73721']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("unknown command 'cpd'");
      expect(r.stderr).toContain('Did you mean cpt?');
    });
    it('rejects unknown options and environments', async () => {
      expect((await run(['cpt', '73721', '--frmat', 'json'])).code).toBe(2);
      const e = await run(['--env', 'staging', 'modalities']);
      expect(e.code).toBe(2);
      expect(e.stderr).toContain('unknown environment "staging"');
    });
    it('--help exits 0 and lists commands', async () => {
      const r = await run(['--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('cpt <code>');
    });
  });
});

describe('sso --open prints the URL unless the browser confirmed', () => {
  const fx = mockFixture({ referrals: 20 });

  let dir: ReturnType<typeof tempDir>;

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
