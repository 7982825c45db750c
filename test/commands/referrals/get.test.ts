import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../../src/api/types.js';
import { bothForms, expectUsageError, hasEscapes, piped, plain, widest } from '../../fake-io.js';
import { mockFixture, run, tempDir } from '../../helpers.js';

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
    // The same view, the escapes aside, up to the documents' links and the free-text notes, which wrap at 80 columns.
    const [head, notes] = plain(terminal.stdout).split('\nCall notes (2)\n');
    expect(head!.split('\nDocuments (')[0]).toBe(p.stdout.split('\nDocuments (')[0]);
    const words = (s: string) => s.replace(/\s+/g, ' ');
    expect(words(plain(terminal.stdout))).toBe(words(p.stdout));
    expect(notes).toMatch(/Spoke with paralegal; authorization pending\. Follow\s+up\s+Friday\.\n$/);
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

  it('--bom and --no-formula-guard: refused before any request, with a hint that does not point to CSV', async () => {
    for (const flag of ['--bom', '--no-formula-guard']) {
      const before = fx.apiRequests().length;
      const r = await piped(['referrals', 'get', 'R-240004', flag], { env: fx.env() });
      expectUsageError(
        r,
        /is for CSV output, and imaging referrals get writes no CSV/,
        fx.apiRequests().length - before,
      );
      expect(r.stderr).toContain(`hint: Leave ${flag} out.`);
    }
  });

  it('an unknown id is not found, exit 4', async () => {
    const r = await piped(['referrals', 'get', '00000000-0000-4000-8000-000000000000'], { env: fx.env() });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: /);
  });

  it("takes a reference in any case: looked up with the list's q, then read by its id", async () => {
    const byId = await piped(['referrals', 'get', ID], { env: fx.env() });
    fx.reset();
    const { terminal, piped: p } = await bothForms(['referrals', 'get', 'r-240001'], { env: fx.env() });
    expect(p.code).toBe(0);
    expect(p.stdout).toBe(byId.stdout);
    expect(terminal.code).toBe(0);
    expect(plain(terminal.stdout).startsWith(`Referral R-240001  ${ID}\n`)).toBe(true);
    expect(fx.apiRequests().map((q) => q.path)).toEqual([
      '/api/v2/referrals?q=r-240001&page=1&per_page=100',
      `/api/v2/referrals/${ID}`,
      '/api/v2/referrals?q=r-240001&page=1&per_page=100',
      `/api/v2/referrals/${ID}`,
    ]);
  });

  it.for([
    ['R-240002', '--reports'],
    ['R-240004', '--reports --documents'],
    ['R-240008', '--documents'],
  ])(
    '%s: the Files line names the flags that fetch what is in, and running it saves all of it',
    async ([ref, flags]) => {
      const r = await piped(['referrals', 'get', ref!], { env: fx.env() });
      expect(r.code, r.stderr).toBe(0);
      const line = r.stdout.split('\n').find((l) => l.trim().startsWith('Files: '));
      expect(line?.trim()).toBe(`Files: imaging referrals download ${ref} ${flags}`);
      const inList = r.stdout.split('\nDocuments (')[1]!.split('\n\n')[0]!;
      const available = inList.split('\n').filter((l) => /^ {2}(report|document)\b.* available$/.test(l));
      const dir = tempDir();
      try {
        const argv = line!.trim().slice('Files: imaging '.length).split(' ');
        const d = await piped([...argv, '-D', dir.path], { env: fx.env() });
        expect(d.code, d.stderr).toBe(0);
        expect(readdirSync(dir.path)).toHaveLength(available.length);
      } finally {
        dir.cleanup();
      }
    },
  );

  it('an unknown reference is not found, exit 4, saying what was searched; no argument is a usage error', async () => {
    const r = await piped(['referrals', 'get', 'R-999999'], { env: fx.env() });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `error: no referral has the reference "R-999999": searched the referral list with q (1 page)`,
    );
    fx.reset();
    expectUsageError(
      await piped(['referrals', 'get'], { env: fx.env() }),
      /missing required argument/,
      fx.apiRequests().length,
    );
  });
});

describe('referrals get', () => {
  const fx = mockFixture({ referrals: 250 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  beforeEach(() => fx.reset());

  const all = (): Referral[] => fx.mock.referrals.slice(0, fx.mock.referrals.total);

  const withVisits = () => all().find((r) => r.visits.some((v) => v.start_time) && r.call_notes.length > 0)!;

  it('shows header, patient, visits with procedures in local time, ICD-10 codes and call notes', async () => {
    const ref = withVisits();
    const r = await run(['referrals', 'get', ref.id], { env: fx.env({ TZ: 'America/Los_Angeles' }) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Referral ${ref.reference}`);
    expect(r.stdout).toContain(`Name:           ${ref.patient.first_name}`);
    const scheduled = ref.visits.find((v) => v.start_time)!;
    // The one time format for people, in TZ's zone: 2026-01-07 09:00 PST.
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', {
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
        timeZoneName: 'short',
        timeZone: 'America/Los_Angeles',
      })
        .formatToParts(new Date(scheduled.start_time!))
        .map((p) => [p.type, p.value]),
    );
    const local = `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${parts.timeZoneName}`;
    expect(r.stdout).toContain(`Start:         ${local}`);
    expect(local).toMatch(/P[SD]T$/);
    expect(r.stdout).toContain(`Visits (${ref.visits.length})`);
    expect(r.stdout).toContain(`ICD-10 codes (${ref.icd10_codes.length})`);
    expect(r.stdout).toContain(`Call notes (${ref.call_notes.length})`);
  });

  it('shows a visit status it does not know as it is', async () => {
    const ref = all().find((r) => r.visits.some((v) => v.status === 'awaiting_records'))!;
    const r = await run(['referrals', 'get', ref.id], { env: fx.env() });
    expect(r.stdout).toMatch(/\d\. \S+\s+awaiting_records/);
  });

  it('prints the referral exactly as the API sent it with --json', async () => {
    const ref = all()[3]!;
    const r = await run(['referrals', 'get', ref.id, '--json'], { env: fx.env() });
    expect(r.stdout).toBe(`${JSON.stringify(ref)}\n`);
  });

  it('rejects a blank argument before any request, and an unknown id is exit 4 with the request id', async () => {
    const bad = await run(['referrals', 'get', '  '], { env: fx.env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error: the referral id or reference is empty');
    expect(fx.apiRequests()).toHaveLength(0);
    const missing = await run(['referrals', 'get', '00000000-0000-4000-8000-000000000000'], {
      env: fx.env(),
    });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/request id: req_[0-9a-f]{16}/);
  });
});
