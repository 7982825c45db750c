import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, piped, plain, widest } from '../../fake-io.js';
import { mockFixture } from '../../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const ID = '3212c76a-c27e-4ca2-9e90-bb9c865c1630'; // R-240001 of the emulator's data

describe('imaging referrals get', () => {
  it('shows the referral, its patient and its visits as one view, styled only on a terminal', async () => {
    const { terminal, piped: p } = await bothForms(['referrals', 'get', ID], { env: fx.env() });
    expect(terminal.code).toBe(0);
    expect(terminal.stdout).toContain('\u001b[1m');
    expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    expect(p.code).toBe(0);
    expect(hasEscapes(p.stdout)).toBe(false);
    // The same view, the escapes aside, up to the free-text notes, which wrap at 80 columns.
    const [head, notes] = plain(terminal.stdout).split('\nCall notes (2)\n');
    expect(head).toBe(p.stdout.split('\nCall notes (2)\n')[0]);
    expect(notes).toMatch(/Spoke with paralegal; authorization pending\. Follow\n +up Friday\.\n$/);
    expect(p.stdout).toMatch(/Spoke with paralegal; authorization pending\. Follow up Friday\.\n$/);
    expect(p.stdout.startsWith(`Referral R-240001  ${ID}\nStatus: `)).toBe(true);
    expect(p.stdout).toMatch(/^Status: +closed$/m);
    expect(p.stdout).toMatch(/^Payor: +Blue Cross, Blue Shield$/m);
    expect(p.stdout).toMatch(/^Patient\n {2}Name: +Emma Hernández$/m);
    expect(p.stdout).toContain('\nVisits (2)\n  1. CT  contacted_for_booking  41fcdf92-');
    expect(p.stdout).toMatch(/^ {7}CPT: +74176$/m);
    expect(p.stdout).toContain(
      '\nICD-10 codes (1)\n  S90.01XD  Contusion of right ankle, subsequent encounter\n',
    );
    expect(terminal.stderr + p.stderr).toBe('');
  });

  it('prints the record as the API sent it with --json', async () => {
    const r = await piped(['referrals', 'get', ID, '--json'], { env: fx.env() });
    const referral = JSON.parse(r.stdout);
    expect(referral).toMatchObject({ id: ID, reference: 'R-240001' });
    expect(referral.visits).toHaveLength(2);
  });

  it('an unknown id is not found, exit 4', async () => {
    const r = await piped(['referrals', 'get', '00000000-0000-4000-8000-000000000000'], { env: fx.env() });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: /);
  });

  it('takes an id, not a reference, and says which column has it, before any request', async () => {
    const r = await piped(['referrals', 'get', 'R-240001'], { env: fx.env() });
    expectUsageError(r, /"R-240001" is not a referral id \(a UUID\)/, fx.apiRequests().length);
    expect(r.stderr).toContain(
      "hint: R-240001 is a referral's reference; this takes its id, the ID column of: imaging referrals list",
    );
    expectUsageError(
      await piped(['referrals', 'get'], { env: fx.env() }),
      /missing required argument/,
      fx.apiRequests().length,
    );
  });
});
