import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, piped } from '../fake-io.js';
import { mockFixture } from '../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('imaging sso', () => {
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
