import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, lines, piped, plain, widest } from '../../fake-io.js';
import { mockFixture } from '../../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const TOKEN = 'mock-status-TOKEN-77ab';

describe('imaging auth status', () => {
  it('shows each environment, the active one starred, the token masked, in both forms, with no request', async () => {
    const { terminal, piped: p } = await bothForms(['auth', 'status'], {
      env: fx.env({ IMAGING_TOKEN: TOKEN }),
    });
    expect(fx.apiRequests()).toHaveLength(0);
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
      expect(r.stderr).toContain('* active environment (from IMAGING_ENV)\n');
    }
    expect(terminal.stdout).toContain('\u001b[1m');
    expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    expect(plain(terminal.stdout)).toMatch(
      /^\* +local +http:\/\/127\.0\.0\.1:\d+ \(IMAGING_BASE_URL\) +\*\*\*\*77ab/m,
    );
    expect(hasEscapes(p.stdout + p.stderr)).toBe(false);
    const rows = lines(p.stdout);
    expect(rows[0]!.trim().split(/ {2,}/)).toEqual(['ENVIRONMENT', 'BASE URL', 'TOKEN', 'TOKEN ORIGIN']);
    expect(rows.slice(1).map((l) => l.slice(3).split(' ')[0])).toEqual(['sandbox', 'production', 'local']);
    expect(p.stdout).toMatch(
      /^\* +local +http:\/\/127\.0\.0\.1:\d+ \(IMAGING_BASE_URL\) +\*\*\*\*77ab \(IMAGING_TOKEN\) +/m,
    );
  });

  it('gives the same facts as JSON, the token masked', async () => {
    const r = await piped(['auth', 'status', '--json'], { env: fx.env({ IMAGING_TOKEN: TOKEN }) });
    const envs = JSON.parse(r.stdout);
    expect(envs.map((e: { environment: string }) => e.environment)).toEqual([
      'sandbox',
      'production',
      'local',
    ]);
    expect(envs.find((e: { active: boolean }) => e.active).environment).toBe('local');
    expect(r.stdout).not.toContain(TOKEN);
  });

  it('--check asks the API once, for the one environment that can be asked, and says how each went', async () => {
    const r = await piped(['auth', 'status', '--check'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(fx.apiRequests()).toHaveLength(1);
    const rows = lines(r.stdout);
    expect(rows[0]!.trim().split(/ {2,}/)).toEqual([
      'ENVIRONMENT',
      'BASE URL',
      'TOKEN',
      'TOKEN ORIGIN',
      'CHECK',
    ]);
    expect(rows[1]).toMatch(/^ {3}sandbox .* no base URL$/);
    expect(rows[3]).toMatch(/^\* +local .* ok$/);
  });

  it('takes no argument', async () => {
    expectUsageError(
      await piped(['auth', 'status', 'local'], { env: fx.env() }),
      /argument/,
      fx.apiRequests().length,
    );
  });
});
