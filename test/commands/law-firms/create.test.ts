import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, hasEscapes, onTerminal, piped, plain } from '../../fake-io.js';
import { mockFixture } from '../../helpers.js';

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
