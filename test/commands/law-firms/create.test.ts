import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, hasEscapes, onTerminal, piped, plain } from '../../fake-io.js';
import { mockFixture, run, tempDir } from '../../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const firm = (name: string) => ['law-firms', 'create', '--name', name, '--city', 'Boston', '--state', 'MA'];

describe('imaging law-firms create', () => {
  it('requests a firm and says it stays pending, on a terminal and piped', async () => {
    const t = await onTerminal(firm('Acme Injury Law'), { env: fx.env() });
    expect(t.code).toBe(0);
    expect(plain(t.stdout)).toMatch(/^Name: +Acme Injury Law$/m);
    expect(plain(t.stdout)).toMatch(/^City: +Boston$/m);
    expect(plain(t.stdout)).toMatch(/^ID: +[0-9a-f-]{36}$/m);
    expect(t.stdout).toContain('\u001b[1m');
    expect(t.stderr).toBe('Law firm requested: it stays pending until the service approves it.\n');
    const p = await piped(firm('Beta Injury Law'), { env: fx.env() });
    expect(p.code).toBe(0);
    expect(hasEscapes(p.stdout + p.stderr)).toBe(false);
    expect(p.stdout).toMatch(/^Name: +Beta Injury Law\n/);
    expect(p.stdout).toMatch(/^State: +MA$/m);
    expect(fx.apiRequests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /api/v2/law_firms',
      'POST /api/v2/law_firms',
    ]);
  });

  it('prints the created firm as JSON for scripts', async () => {
    const r = await piped([...firm('Gamma Injury Law'), '--json'], { env: fx.env() });
    expect(r.code).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created).toMatchObject({ name: 'Gamma Injury Law', city: 'Boston', state: 'MA' });
  });

  it('a firm that already exists is the server validation error, exit 7', async () => {
    await piped(firm('Delta Injury Law'), { env: fx.env() });
    const again = await piped(firm('Delta Injury Law'), { env: fx.env() });
    expect(again.code).toBe(7);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('- Name has already been taken in this city');
  });

  it('checks the fields before any request', async () => {
    const seen = () => fx.apiRequests().length;
    expectUsageError(
      await piped(['law-firms', 'create', '--name', 'X', '--city', 'Y'], { env: fx.env() }),
      /--state/,
      seen(),
    );
    expectUsageError(
      await piped([...firm('X').slice(0, 6), '--state', 'Mass'], { env: fx.env() }),
      /--state must be a two-letter abbreviation, not "Mass"/,
      seen(),
    );
    expectUsageError(
      await piped([...firm('X'), '--zipcode', '123'], { env: fx.env() }),
      /--zipcode must be 12345 or 12345-6789, not "123"/,
      seen(),
    );
    expectUsageError(await piped(firm(''), { env: fx.env() }), /--name is empty/, seen());
  });
});

describe('law-firms create: the body, its errors, its flags', () => {
  it('creates a firm with a { law_firm } body and shows it', async () => {
    const r = await run(
      [
        'law-firms',
        'create',
        '--name',
        'Brand New Injury Law',
        '--city',
        'Reno',
        '--state',
        'nv',
        '--zipcode',
        '89501',
        '--address-line-1',
        '1 Main St',
      ],
      { env: fx.env() },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Name:\s+Brand New Injury Law/);
    expect(r.stdout).toMatch(/State:\s+NV/);
    const again = await run(['law-firms', 'search', 'Brand New', '--json'], { env: fx.env() });
    expect(JSON.parse(again.stdout)).toHaveLength(1);
  });

  it('lists the 422 errors and exits 7', async () => {
    const r = await run(
      [
        'law-firms',
        'create',
        '--name',
        "O'Brien & Associates, P.C.",
        '--city',
        'Philadelphia',
        '--state',
        'PA',
      ],
      {
        env: fx.env(),
      },
    );
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('422 Unprocessable Entity');
    expect(r.stderr).toContain('- Name has already been taken in this city');
    expect(r.stderr).toMatch(/request id: req_[0-9a-f]+/);
  });

  it('checks the state before sending anything', async () => {
    const r = await run(['law-firms', 'create', '--name', 'X', '--city', 'Y', '--state', 'Nevada'], {
      env: fx.env(),
    });
    expect(r.code).toBe(2);
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('requires the mandatory flags', async () => {
    const r = await run(['law-firms', 'create', '--name', 'X'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/required option '--city <city>' not specified/);
  });
  it('in production: refused without a terminal or --yes (exit 2, nothing sent), asked on a terminal, sent with --yes', async () => {
    const dir = tempDir();
    try {
      const prod = {
        IMAGING_ENV: 'production',
        IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
        IMAGING_TOKEN: 'mock-prod',
        IMAGING_CONFIG_DIR: dir.path,
      };
      const posts = () => fx.apiRequests().filter((q) => q.method === 'POST');
      const refused = await piped(firm('Prod Injury Law'), { env: prod });
      expectUsageError(refused, /creating a law firm in production needs confirmation/, posts().length);
      expect(refused.stderr).toContain('hint: There is no terminal to ask on: add --yes to confirm.');
      const asked: string[] = [];
      const declined = await run(firm('Prod Injury Law'), {
        env: prod,
        stdinIsTTY: true,
        deps: {
          prompter: {
            secret: async () => '',
            confirm: async (q: string) => {
              asked.push(q);
              return false;
            },
          },
        },
      });
      expect(declined.code).toBe(1);
      expect(asked[0]).toMatch(/^Create the law firm "Prod Injury Law" \(Boston, MA\) in PRODUCTION/);
      expect(declined.stderr).toContain('Nothing was sent.');
      expect(posts()).toEqual([]);
      const yes = await piped([...firm('Prod Injury Law'), '--yes'], { env: prod });
      expect(yes.code, yes.stderr).toBe(0);
      expect(posts()).toHaveLength(1);
    } finally {
      dir.cleanup();
    }
  });
});
