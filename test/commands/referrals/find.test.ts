import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../../src/api/types.js';
import type { GlobalOptions } from '../../../src/cli/globals.js';
import { Context } from '../../../src/context.js';
import type { Prompter } from '../../../src/io.js';
import { resolveReferrals } from '../../../src/referrals/resolve.js';
import { mostAdvancedVisit } from '../../../src/resources/referrals.js';
import { bothForms, expectTableForms, expectUsageError, lines, piped, plain } from '../../fake-io.js';
import { fakeIO, json, mockFixture, run, spawnCli, tempDir, testServer } from '../../helpers.js';

/**
 * `referrals find TEXT` and references in place of ids, against the emulator: its `q` search (the
 * answer trusted when every record matches) and, with `ignoreSearch`, the page scan that replaces it.
 */

const fx = mockFixture();
/** A server whose list ignores q: every lookup is a scan (250 referrals, 3 pages of 100). */
const deaf = mockFixture({ referrals: 250, ignoreSearch: true });
beforeAll(() => Promise.all([fx.start(), deaf.start()]));
afterAll(() => Promise.all([fx.stop(), deaf.stop()]));
beforeEach(() => {
  fx.reset();
  deaf.reset();
});

const all = (m: typeof fx): Referral[] => m.mock.referrals.slice(0, m.mock.referrals.total);
const refs = (stdout: string) => lines(stdout).map((l) => l.split(/ {2,}/)[0]);
const HEADERS = ['REFERENCE', 'STATUS', 'LINE OF BUSINESS', 'PATIENT', 'VISITS', 'MOST ADVANCED VISIT', 'ID'];
const Q = (text: string) => `/api/v2/referrals?q=${encodeURIComponent(text)}&page=1&per_page=100`;

describe('imaging referrals find', () => {
  it('finds by reference in any case, one q request, as the list table in both forms', async () => {
    const forms = await bothForms(['referrals', 'find', 'r-240001'], { env: fx.env() });
    expectTableForms(forms, HEADERS, ['R-240001']);
    // At 80 columns, the list's own choice of columns; piped, every one.
    expect(plain(forms.terminal.stdout)).toMatch(/^R-240001 +closed +.*Hernández, Emma/m);
    expect(forms.terminal.stderr).toMatch(/^Left out: .*\(--wide shows all\)\n$/);
    expect(forms.piped.stdout).toMatch(
      /^R-240001 +closed +workers_comp +Hernández, Emma +2 +\S+ +3212c76a-/m,
    );
    expect(forms.piped.stderr).toBe('');
    expect(fx.apiRequests().map((r) => r.path)).toEqual([Q('r-240001'), Q('r-240001')]);
  });

  it('finds by last name, "last, first" and "first last"; case and accents aside', async () => {
    const garcias = all(fx)
      .filter((r) => r.patient.last_name === 'Garcia')
      .map((r) => r.reference);
    expect(garcias.length).toBeGreaterThan(2);
    const last = await piped(['referrals', 'find', 'GARCIA'], { env: fx.env() });
    expect(last.code).toBe(0);
    expect(refs(last.stdout).slice(1)).toEqual(garcias);
    // R-240006 is Mary "Molly" Garcia: the first name may stop at its first word.
    for (const name of ['garcia, mary', 'Mary Garcia', 'garcia mary']) {
      const r = await piped(['referrals', 'find', name], { env: fx.env() });
      expect(r.code, name).toBe(0);
      expect(refs(r.stdout), name).toEqual(['REFERENCE', 'R-240006']);
    }
    // A last name typed in other pieces: O Connor is O'Connor, as oconnor is.
    const oconnor = await piped(['referrals', 'find', 'oconnor', '--fields', 'reference'], { env: fx.env() });
    expect(oconnor.code).toBe(0);
    expect(lines(oconnor.stdout).length).toBeGreaterThan(1);
    for (const typed of ['O Connor', "o'connor"]) {
      const r = await piped(['referrals', 'find', typed, '--fields', 'reference'], { env: fx.env() });
      expect(r.stdout, typed).toBe(oconnor.stdout);
    }
    const accents = await piped(['referrals', 'find', 'hernandez, emma', '--fields', 'reference'], {
      env: fx.env(),
    });
    expect(lines(accents.stdout)).toContain('R-240001');
  });

  it('find - reads the text from standard input (a name kept out of the command line); none or two is exit 2', async () => {
    const r = await piped(['referrals', 'find', '-'], { env: fx.env(), stdin: '\ngarcia, mary\n\n' });
    expect(r.code).toBe(0);
    expect(refs(r.stdout)).toEqual(['REFERENCE', 'R-240006']);
    const before = fx.apiRequests().length;
    const empty = await piped(['referrals', 'find', '-'], { env: fx.env(), stdin: '\n' });
    expectUsageError(empty, /nothing to search for on standard input/, fx.apiRequests().length - before);
    const two = await piped(['referrals', 'find', '-'], { env: fx.env(), stdin: 'garcia\nsmith\n' });
    expectUsageError(
      two,
      /find - reads one search text, and standard input holds 2 lines/,
      fx.apiRequests().length - before,
    );
  });

  it("a referral's id, pasted in any case, is that referral (one request); an unknown one is exit 4 with the visit hint", async () => {
    const r4 = all(fx).find((r) => r.reference === 'R-240004')!;
    const before = fx.apiRequests().length;
    const r = await piped(['referrals', 'find', r4.id.toUpperCase()], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(refs(r.stdout)).toEqual(['REFERENCE', 'R-240004']);
    expect(
      fx
        .apiRequests()
        .slice(before)
        .map((q) => q.path),
    ).toEqual([`/api/v2/referrals/${r4.id}`]);
    const none = await piped(['referrals', 'find', '00000000-0000-4000-8000-000000000000'], {
      env: fx.env(),
    });
    expect(none.code).toBe(4);
    expect(none.stderr).toMatch(/^hint: No referral has this id\. If this is a visit's id/m);
  });

  it('a text over 4 KiB, in the command line or on standard input, is exit 2 before any request, for every command that takes a reference', async () => {
    const long = 'a'.repeat(4097);
    const before = fx.apiRequests().length;
    for (const args of [
      ['referrals', 'find', long],
      ['referrals', 'get', `R-${long}`],
      ['referrals', 'documents', `R-${long}`],
      ['referrals', 'download', 'R-240001', `R-${long}`],
      ['referrals', 'watch', `R-${long}`],
    ]) {
      const r = await piped(args, { env: fx.env() });
      expectUsageError(r, /is longer than 4 KiB/, fx.apiRequests().length - before);
      expect(r.stderr).not.toContain('aaaa');
    }
    const stdin = await piped(['referrals', 'find', '-'], { env: fx.env(), stdin: long });
    expectUsageError(stdin, /larger than 4 KiB/, fx.apiRequests().length - before);
    // At the limit it is a search like any other.
    const at = await piped(['referrals', 'find', 'a'.repeat(4096)], { env: fx.env() });
    expect(at.code).toBe(4);
  });

  it('finds by date of birth as YYYY-MM-DD or MM/DD/YYYY (also where only the MM/DD/YYYY field is set)', async () => {
    const r6 = all(fx).find((r) => r.reference === 'R-240006')!;
    expect(r6.patient.date_of_birth_iso).toBeNull();
    const born = all(fx)
      .filter((r) => r.patient.date_of_birth === '09/24/1972')
      .map((r) => r.reference);
    for (const dob of ['1972-09-24', '09/24/1972', '9/24/1972']) {
      const r = await piped(['referrals', 'find', dob, '--json'], { env: fx.env() });
      expect(r.code, dob).toBe(0);
      expect(JSON.parse(r.stdout).map((x: Referral) => x.reference)).toEqual(born);
    }
    expect(born).toContain('R-240006');
  });

  it('finds by claim number: wc_number or insurance_number, in every format', async () => {
    const wc = await piped(
      ['referrals', 'find', 'wcb-2026-00001', '--format', 'csv', '--fields', 'reference'],
      {
        env: fx.env(),
      },
    );
    expect(wc.stdout).toBe('reference\r\nR-240001\r\n');
    const member = await piped(['referrals', 'find', 'MBR100002', '--format', 'ndjson'], { env: fx.env() });
    expect(lines(member.stdout).map((l) => JSON.parse(l).reference)).toEqual(['R-240002']);
  });

  it('nothing found: exit 4 saying what was searched and how many pages', async () => {
    const r = await piped(['referrals', 'find', 'Nobody'], { env: fx.env() });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'error: no referral matches "Nobody": searched the referral list with q (1 page)',
    );
    const scan = await piped(['referrals', 'find', 'Nobody'], { env: deaf.env() });
    expect(scan.code).toBe(4);
    expect(scan.stderr).toContain(
      'error: no referral matches "Nobody": searched 3 pages of the referral list (250 referrals), as q did not narrow it',
    );
  });

  it('a name as the table shows it, hyphen or space, and letters NFD keeps whole: the q search and the scan agree', async () => {
    const tableName = (r: Referral) => `${r.patient.last_name}, ${r.patient.first_name}`;
    const fold = (t: string) => t.toLowerCase().replace(/ø/g, 'o').normalize('NFD').replace(/\p{M}/gu, '');
    const cases: Array<[string[], (r: Referral) => boolean]> = [
      [['Smith, Jr., Aisha'], (r) => tableName(r) === 'Smith, Jr., Aisha'],
      [['Smith, Jr.'], (r) => r.patient.last_name === 'Smith, Jr.'],
      [['rodriguez lopez'], (r) => fold(r.patient.last_name) === 'rodriguez-lopez'],
      [['Rodriguez-Lopez'], (r) => fold(r.patient.last_name) === 'rodriguez-lopez'],
      [['odegaard'], (r) => r.patient.last_name === 'Ødegaard'],
      // Unquoted words are one text, as gh search reads them.
      [['Garcia', 'Mary'], (r) => r.reference === 'R-240006'],
    ];
    for (const [argv, want] of cases) {
      const expected = all(fx)
        .filter(want)
        .map((r) => r.reference);
      expect(expected.length, argv.join(' ')).toBeGreaterThan(0);
      for (const m of [fx, deaf]) {
        const r = await piped(['referrals', 'find', ...argv, '--fields', 'reference'], { env: m.env() });
        expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
        const inM = all(m)
          .filter(want)
          .map((x) => x.reference);
        expect(lines(r.stdout).slice(1), argv.join(' ')).toEqual(inM);
      }
    }
  });

  it('a server that ignores q: its answer is not trusted, the pages are scanned and the scan stops at the reference', async () => {
    const r = await piped(['referrals', 'find', 'R-240150', '--fields', 'reference'], { env: deaf.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('REFERENCE\nR-240150\n');
    const paths = deaf.apiRequests().map((q) => q.path);
    // The q answer, q ignored, is page 1 of the plain list: not asked for again.
    expect(paths.slice(0, 2)).toEqual([Q('R-240150'), '/api/v2/referrals?page=2&per_page=100']);
    // Page 3 may have been asked for while page 2 was read; nothing after it.
    expect(paths.length).toBeLessThanOrEqual(3);
    // A name reads every page: the same records as a server that honours q would give.
    const garcias = all(deaf)
      .filter((x) => x.patient.last_name === 'Garcia')
      .map((x) => x.reference);
    const g = await piped(['referrals', 'find', 'garcia', '--fields', 'reference'], { env: deaf.env() });
    expect(lines(g.stdout).slice(1)).toEqual(garcias);
  });

  it('--verbose shows q redacted: no name, no date of birth in the trace', async () => {
    for (const m of [fx, deaf])
      for (const text of ['Garcia, Mary', '09/24/1972']) {
        const r = await piped(['referrals', 'find', text, '--verbose', '--fields', 'reference'], {
          env: m.env(),
        });
        expect(r.code).toBe(0);
        expect(r.stderr).toContain('referrals?q=[redacted]&page=1&per_page=100');
        expect(r.stderr).not.toMatch(/garcia|mary|1972|09%2F24/i);
      }
  });

  it('imaging referrals search is exit 2, pointing to find', async () => {
    const r = await piped(['referrals', 'search', 'Garcia'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("error: unknown command 'search'\nhint: Did you mean imaging referrals find?\n");
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('most_advanced_visit is a field as in the list: its old name with a note, refused for JSON before any request', async () => {
    const best = all(fx).find((r) => r.reference === 'R-240001')!;
    const want = mostAdvancedVisit(best.visits);
    expect(want).toBeTruthy();
    const t = await piped(['referrals', 'find', 'R-240001', '--fields', 'reference,most_advanced_visit'], {
      env: fx.env(),
    });
    expect(t.code, t.stderr).toBe(0);
    expect(lines(t.stdout)[1]).toMatch(new RegExp(`^R-240001 +${want}$`));
    const old = await piped(
      ['referrals', 'find', 'R-240001', '--format', 'csv', '--fields', 'latest_visit_status'],
      {
        env: fx.env(),
      },
    );
    expect(old.stdout).toBe(`most_advanced_visit\r\n${want}\r\n`);
    expect(old.stderr).toMatch(/^Note: --fields latest_visit_status is now most_advanced_visit; /);
    fx.reset();
    const json = await piped(['referrals', 'find', 'R-240001', '--json', 'reference,most_advanced_visit'], {
      env: fx.env(),
    });
    expect(json.code).toBe(2);
    expect(json.stderr).toMatch(/--fields most_advanced_visit is computed by this tool/);
    expect(fx.apiRequests()).toHaveLength(0);
  });
});

describe('a reference that names several referrals', () => {
  let server: Awaited<ReturnType<typeof testServer>>;
  let twins: Referral[];
  beforeAll(async () => {
    const [a, b] = all(fx);
    // The second as an API may send it: the patient's first and last name only (name is deprecated).
    const { name: _, ...named } = b!.patient;
    twins = [a!, { ...b!, reference: a!.reference, patient: named as Referral['patient'] }];
    server = await testServer((_req, res) => json(res, 200, { referrals: twins, meta: { total_pages: 1 } }));
  });
  afterAll(() => server.close());

  it('get lists them and exits 2; find shows both', async () => {
    const env = { ...fx.env(), IMAGING_BASE_URL: server.url };
    const r = await piped(['referrals', 'get', 'r-240000'], { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      [
        '"r-240000" is the reference of 2 referrals:',
        `  ${twins[0]!.id}  R-240000  ${twins[0]!.patient.last_name}, ${twins[0]!.patient.first_name}  ${twins[0]!.status}`,
        `  ${twins[1]!.id}  R-240000  ${twins[1]!.patient.last_name}, ${twins[1]!.patient.first_name}  ${twins[1]!.status}`,
        'error: "r-240000" matches 2 referrals',
        'hint: Give the id (UUID) of the one meant, from the list above.',
        '',
      ].join('\n'),
    );
    // No second request: the referral is not read until one is chosen.
    expect(server.seen.map((s) => s.url)).toEqual([Q('r-240000')]);
    const f = await piped(['referrals', 'find', 'R-240000', '--fields', 'id'], { env });
    expect(lines(f.stdout).slice(1)).toEqual(twins.map((t) => t.id));
  });
});

describe('resolveReferrals: many at once', () => {
  const context = (m: typeof fx) =>
    new Context({
      io: fakeIO().io,
      env: { ...m.env(), IMAGING_KEYCHAIN: 'off' },
      globals: {} as GlobalOptions,
    });
  const texts = ['R-240210', '3212C76A-C27E-4CA2-9E90-BB9C865C1630', 'r-240007', 'R-240007', 'R-240120'];

  it('in the order given: ids as they are (no request), each reference once, with its list record', async () => {
    for (const m of [fx, deaf]) {
      const got = await resolveReferrals(context(m), texts);
      expect(got.map((g) => g.reference)).toEqual([
        'R-240210',
        undefined,
        'R-240007',
        'R-240007',
        'R-240120',
      ]);
      expect(got[1]).toEqual({ id: '3212c76a-c27e-4ca2-9e90-bb9c865c1630' });
      for (const g of got.filter((x) => x.referral)) expect(g.referral!.id).toBe(g.id);
    }
    // q honoured: one request per distinct reference; ignored: one q request (page 1), then pages 2 and 3.
    expect(fx.apiRequests()).toHaveLength(3);
    expect(deaf.apiRequests().map((r) => r.path)).toEqual([
      Q('R-240210'),
      '/api/v2/referrals?page=2&per_page=100',
      '/api/v2/referrals?page=3&per_page=100',
    ]);
  });

  it('a server that refuses q (422) is scanned instead', async () => {
    const [a] = all(fx);
    const server = await testServer((req, res) =>
      req.url!.includes('q=')
        ? json(res, 422, { error: { code: 'validation_error', message: 'unknown parameter q' } })
        : json(res, 200, { referrals: [a], meta: { total_pages: 1 } }),
    );
    try {
      const ctx = new Context({
        io: fakeIO().io,
        env: { ...fx.env(), IMAGING_BASE_URL: server.url, IMAGING_KEYCHAIN: 'off' },
        globals: {} as GlobalOptions,
      });
      expect((await resolveReferrals(ctx, [a!.reference]))[0]!.id).toBe(a!.id);
      expect(server.seen.map((x) => x.url)).toEqual([
        Q(a!.reference),
        '/api/v2/referrals?page=1&per_page=100',
      ]);
    } finally {
      await server.close();
    }
  });

  it('every reference not found is named in one exit 4', async () => {
    for (const m of [fx, deaf]) {
      const err = await resolveReferrals(context(m), ['R-240001', 'R-1', 'r-2']).catch((e: unknown) => e);
      expect(err).toMatchObject({
        exitCode: 4,
        message: expect.stringMatching(/^no referral has the reference "R-1", "r-2": searched /),
      });
    }
  });
});

describe('the cost of a scan in the sandbox', () => {
  // 1,150 referrals: page 1 and 11 more pages of 100.
  const big = mockFixture({ referrals: 1150, ignoreSearch: true });
  beforeAll(() => big.start());
  afterAll(() => big.stop());
  let n = 0;
  const sandbox = () => ({
    ...big.env(),
    IMAGING_ENV: 'sandbox',
    IMAGING_TOKEN: `mock-find-${process.pid}-${++n}`,
  });
  const asking = (answer: boolean) => {
    const asked: string[] = [];
    const prompter: Prompter = {
      secret: async () => '',
      confirm: async (message) => {
        asked.push(message);
        return answer;
      },
    };
    return { asked, prompter };
  };

  it('over 10 pages: says what the scan costs and asks when it is over a quarter of what is left', async () => {
    const env = sandbox();
    await run(['auth', 'allowance', '--used', '1968'], { env }); // 31 left after q (page 1 of the scan)
    big.reset();
    const no = asking(false);
    const r = await run(['referrals', 'find', 'Garcia'], {
      env,
      stdinIsTTY: true,
      stderrIsTTY: true,
      deps: { prompter: no.prompter },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'The server did not narrow the referral list with q: searching its 12 pages one by one, up to 11 more requests.',
    );
    expect(no.asked).toEqual([
      'This search needs 11 more requests, over a quarter of the ≈31 left in the sandbox allowance (counted on this machine). Continue?',
    ]);
    expect(big.apiRequests()).toHaveLength(1);
    // Piped, with plenty left: the cost is shown, and with no terminal to ask on, --yes goes on.
    big.reset();
    const ok = await piped(['referrals', 'find', 'Garcia', '--fields', 'reference', '--yes'], {
      env: sandbox(),
    });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toBe(
      'The server did not narrow the referral list with q: searching its 12 pages one by one, up to 11 more requests.\n',
    );
    expect(big.apiRequests()).toHaveLength(12);
  });

  it('a reference on page 1 (the q answer the server did not narrow): found there, no cost check, no second page 1', async () => {
    big.reset();
    for (const args of [
      ['get', 'R-240004'],
      ['find', 'R-240004', '--fields', 'reference'],
    ]) {
      const r = await piped(['referrals', ...args], { env: sandbox() });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
    }
    expect(big.apiRequests().map((q) => q.path)).toEqual([
      Q('R-240004'),
      `/api/v2/referrals/${all(big).find((x) => x.reference === 'R-240004')!.id}`,
      Q('R-240004'),
    ]);
  });

  it('over 10 pages, piped: exit 6 (the allowance), as export; on a terminal the question is asked', async () => {
    big.reset();
    const r = await piped(['referrals', 'get', 'R-241100'], { env: sandbox() });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(
      'error: this search would read 12 pages of the referral list, 11 more requests from the sandbox allowance, and there is no terminal to ask on: stopped before sending them',
    );
    expect(big.apiRequests()).toHaveLength(1);
    big.reset();
    const no = asking(false);
    const t = await run(['referrals', 'get', 'R-241100'], {
      env: sandbox(),
      stdinIsTTY: true,
      stderrIsTTY: true,
      deps: { prompter: no.prompter },
    });
    expect(t.code, t.stderr).toBe(1);
    expect(no.asked).toHaveLength(1);
    expect(no.asked[0]).toMatch(
      /^This search would read 12 pages of the referral list, 11 more requests from the sandbox allowance \(sandbox allowance: .*\)\. Continue\?$/,
    );
    expect(plain(t.stderr)).toContain('error: stopped at your answer after page 1 of the referral list');
    expect(big.apiRequests()).toHaveLength(1);
    big.reset();
    const yes = asking(true);
    const y = await run(['referrals', 'get', 'R-241100', '--json'], {
      env: sandbox(),
      stdinIsTTY: true,
      stderrIsTTY: true,
      deps: { prompter: yes.prompter },
    });
    expect(y.code, y.stderr).toBe(0);
    expect(JSON.parse(y.stdout).reference).toBe('R-241100');
    expect(yes.asked).toHaveLength(1);
  });

  it('10 pages or fewer: no word about the cost', async () => {
    const r = await piped(['referrals', 'get', 'R-240001', '--json'], {
      env: { ...deaf.env(), IMAGING_ENV: 'sandbox', IMAGING_TOKEN: `mock-find-${process.pid}-small` },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });
});

describe('a sandbox list that pages forever and never says how many pages', () => {
  // Page N: one Garcia referral (R-N) and next_page N+1, no total_pages or total_count, ever. With
  // `q=Nobody` its records do not match, so q is not trusted and the list is scanned; with
  // `q=Garcia` every record matches, so the q walk itself goes on. `saysOnePage`: every page says
  // total_pages 1, which its own next_page contradicts (the walk follows next_page).
  let server: Awaited<ReturnType<typeof testServer>>;
  let saysOnePage = false;
  beforeAll(async () => {
    server = await testServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const page = Number(url.searchParams.get('page') ?? '1');
      const hex = page.toString(16).padStart(12, '0');
      json(res, 200, {
        referrals: [
          {
            id: `00000000-0000-4000-8000-${hex}`,
            reference: `R-${page}`,
            patient: { first_name: 'Mary', last_name: 'Garcia', name: 'Mary Garcia' },
          },
        ],
        meta: { current_page: page, next_page: page + 1, ...(saysOnePage ? { total_pages: 1 } : {}) },
      });
    });
  });
  const config = tempDir();
  afterAll(async () => {
    await server.close();
    config.cleanup();
  });
  let n = 0;
  const sandbox = () => ({
    IMAGING_ENV: 'sandbox',
    IMAGING_BASE_URL: server.url,
    IMAGING_CONFIG_DIR: config.path,
    IMAGING_TOKEN: `forever-${process.pid}-${++n}`,
    NO_COLOR: '1',
  });
  const asked: string[] = [];
  const answering = (answer: boolean): Prompter => ({
    secret: async () => '',
    confirm: async (message) => {
      asked.push(message);
      return answer;
    },
  });
  const requests = () => server.seen.filter((r) => r.url.startsWith('/api/v2/referrals'));
  beforeEach(() => {
    server.seen.length = 0;
    asked.length = 0;
  });

  it('piped: a scan stops after 10 pages with exit 6, and so does a trusted q walk; find and get alike', async () => {
    const r = await piped(['referrals', 'find', 'Nobody'], { env: sandbox() });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'The server did not narrow the referral list with q: searching it page by page, stopping after 10 pages, as the server does not say how many there are (--yes goes on).',
    );
    expect(r.stderr).toContain(
      'error: this search has read 10 pages of the referral list, which does not say how many pages there are: stopped before sending more, as each page is a request from the sandbox allowance (sandbox allowance: ≈10 of 2,000 requests used',
    );
    expect(r.stderr).toContain('Narrow the search');
    expect(r.stderr).toContain('or add --yes to read every page.');
    // q (its answer, q ignored, is page 1), then pages 2 to 10 of the scan: nothing after the tenth.
    expect(requests()).toHaveLength(10);
    expect(requests().at(-1)!.url).toBe('/api/v2/referrals?page=10&per_page=100');

    server.seen.length = 0;
    const get = await piped(['referrals', 'get', 'R-0'], { env: sandbox() });
    expect(get.code, get.stderr).toBe(6);
    expect(requests()).toHaveLength(10);

    server.seen.length = 0;
    const q = await piped(['referrals', 'find', 'Garcia'], { env: sandbox() });
    expect(q.code, q.stderr).toBe(6);
    expect(q.stderr).toContain('error: this search has read 10 pages of the referral list');
    expect(requests()).toHaveLength(10);
    expect(requests().every((r) => r.url.includes('q=Garcia'))).toBe(true);

    // A total that next_page contradicts is no total.
    server.seen.length = 0;
    saysOnePage = true;
    try {
      const one = await piped(['referrals', 'find', 'Nobody'], { env: sandbox() });
      expect(one.code, one.stderr).toBe(6);
      expect(requests()).toHaveLength(10);
    } finally {
      saysOnePage = false;
    }
  });

  it('on a terminal it asks once: no stops there, yes goes on until the meter says the allowance is used up', async () => {
    const no = await run(['referrals', 'find', 'Nobody'], {
      env: sandbox(),
      stdinIsTTY: true,
      stderrIsTTY: true,
      deps: { prompter: answering(false) },
    });
    expect(no.code, no.stderr).toBe(1);
    expect(asked).toEqual([
      'This search has read 10 pages of the referral list, which does not say how many pages there are; each page more is a request from the ≈1,990 left in the sandbox allowance (counted on this machine). Continue?',
    ]);
    expect(no.stderr).toContain('error: stopped at your answer after 10 pages of the referral list');
    expect(requests()).toHaveLength(10);

    // 15 left: q (page 1) and pages 2 to 15, then the meter says used up and nothing more is sent, --yes or not.
    server.seen.length = 0;
    asked.length = 0;
    const env = sandbox();
    expect((await run(['auth', 'allowance', '--used', '1985'], { env })).code).toBe(0);
    const yes = await run(['referrals', 'find', 'Nobody'], {
      env,
      stdinIsTTY: true,
      stderrIsTTY: true,
      deps: { prompter: answering(true) },
    });
    expect(yes.code, yes.stderr).toBe(6);
    expect(asked).toHaveLength(1);
    expect(yes.stderr).toContain(
      'error: the meter says the sandbox allowance is used up: this search stopped after 15 pages of the referral list, before sending more (sandbox allowance: ≈2,000 of 2,000 requests used',
    );
    expect(requests()).toHaveLength(15);
  });

  it('--yes asks nothing and goes past 10 pages, still stopping where the meter says the allowance is used up', async () => {
    const env = sandbox();
    expect((await run(['auth', 'allowance', '--used', '1975'], { env })).code).toBe(0);
    const r = await piped(['referrals', 'find', 'Nobody', '--yes'], { env });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(
      'The server did not narrow the referral list with q: searching it page by page, as many requests as there are pages.',
    );
    expect(r.stderr).toContain(
      'error: the meter says the sandbox allowance is used up: this search stopped after 25 pages',
    );
    expect(requests()).toHaveLength(25);
  });
});

describe('a sandbox list that announces its pages: one budget for the scan', () => {
  // Page N: one Garcia referral (R-N), total_pages `announced`, and a next_page that, when `endless`,
  // never stops: past the last page announced too. With q=Nobody the records do not match, so q is
  // not trusted and the list is scanned.
  let server: Awaited<ReturnType<typeof testServer>>;
  let announced = 30;
  let endless = true;
  beforeAll(async () => {
    server = await testServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const page = Number(url.searchParams.get('page') ?? '1');
      json(res, 200, {
        referrals: [
          {
            id: `00000000-0000-4000-8000-${page.toString(16).padStart(12, '0')}`,
            reference: `R-${page}`,
            patient: { first_name: 'Mary', last_name: 'Garcia', name: 'Mary Garcia' },
          },
        ],
        meta: {
          current_page: page,
          next_page: endless || page < announced ? page + 1 : null,
          total_pages: announced,
        },
      });
    });
  });
  const config = tempDir();
  afterAll(async () => {
    await server.close();
    config.cleanup();
  });
  let n = 0;
  const sandbox = () => ({
    IMAGING_ENV: 'sandbox',
    IMAGING_BASE_URL: server.url,
    IMAGING_CONFIG_DIR: config.path,
    IMAGING_TOKEN: `announced-${process.pid}-${++n}`,
    NO_COLOR: '1',
  });
  const requests = () => server.seen.filter((r) => r.url.startsWith('/api/v2/referrals'));
  beforeEach(() => {
    server.seen.length = 0;
    announced = 30;
    endless = true;
  });

  it('piped without --yes: over 10 pages is exit 6 after page 1, naming the pages and requests; find and get alike', async () => {
    for (const args of [
      ['find', 'Nobody'],
      ['get', 'R-0'],
    ]) {
      server.seen.length = 0;
      const r = await piped(['referrals', ...args], { env: sandbox() });
      expect(r.code, r.stderr).toBe(6);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(
        'The server did not narrow the referral list with q: searching its 30 pages one by one, up to 29 more requests.',
      );
      expect(r.stderr).toContain(
        'error: this search would read 30 pages of the referral list, 29 more requests from the sandbox allowance, and there is no terminal to ask on: stopped before sending them',
      );
      expect(r.stderr).toContain('or add --yes to go ahead.');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      // q alone: its answer, q ignored, is page 1 of the scan. Nothing after.
      expect(requests().map((q) => q.url)).toEqual([
        '/api/v2/referrals?q=Nobody&page=1&per_page=100'.replace('Nobody', args[1]!),
      ]);
    }
    // A server announcing a million pages costs the same one request.
    server.seen.length = 0;
    announced = 1_000_000;
    const huge = await piped(['referrals', 'find', 'Nobody'], { env: sandbox() });
    expect(huge.code, huge.stderr).toBe(6);
    // More than the allowance holds: the allowance's stop comes first.
    expect(huge.stderr).toContain(
      'error: this search needs 999,999 more requests, more than the ≈1,999 left',
    );
    expect(requests()).toHaveLength(1);
  });

  it('--yes reads the pages announced and no more: a next_page past them is a stop, not 10% more', async () => {
    const r = await piped(['referrals', 'find', 'Nobody', '--yes'], { env: sandbox() });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      'error: the referral list said it has 30 pages, but page 30 says there are more: this search stopped after 30 pages, before sending more',
    );
    expect(r.stderr).not.toContain('Note: page 30');
    // q (page 1), then pages 2 to 30: none past the last announced.
    expect(requests()).toHaveLength(30);
    expect(requests().at(-1)!.url).toBe('/api/v2/referrals?page=30&per_page=100');
  });

  it('an honest server, --yes: every page announced is read, and nothing found says how many', async () => {
    endless = false;
    announced = 12;
    const r = await piped(['referrals', 'find', 'Nobody', '--yes'], { env: sandbox() });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain('searching its 12 pages one by one, up to 11 more requests.');
    expect(r.stderr).toContain(
      'error: no referral matches "Nobody": searched 12 pages of the referral list (12 referrals), as q did not narrow it',
    );
    expect(requests()).toHaveLength(12);
  });
});

describe('nothing is written to disk', () => {
  it('home, config, cache, state and temporary folders stay empty after finds and lookups, q or scan', async () => {
    const dir = tempDir();
    try {
      const folders = ['home', 'config', 'xdg-config', 'xdg-cache', 'xdg-state', 'xdg-data', 'cache', 'tmp'];
      for (const f of folders) mkdirSync(join(dir.path, f));
      const at = (f: string) => join(dir.path, f);
      const env = (m: typeof fx) => ({
        PATH: process.env.PATH,
        HOME: at('home'),
        XDG_CONFIG_HOME: at('xdg-config'),
        XDG_CACHE_HOME: at('xdg-cache'),
        XDG_STATE_HOME: at('xdg-state'),
        XDG_DATA_HOME: at('xdg-data'),
        IMAGING_CONFIG_DIR: at('config'),
        IMAGING_CACHE_DIR: at('cache'),
        TMPDIR: at('tmp'),
        NODE_DISABLE_COMPILE_CACHE: '1',
        IMAGING_ENV: 'local',
        IMAGING_BASE_URL: m.mock.url,
      });
      const q = await spawnCli(['referrals', 'find', 'garcia, mary'], { env: env(fx) });
      expect(q.exitCode, String(q.stderr)).toBe(0);
      expect(String(q.stdout)).toContain('R-240006');
      const scan = await spawnCli(['referrals', 'get', 'r-240150', '--json'], { env: env(deaf) });
      expect(scan.exitCode, String(scan.stderr)).toBe(0);
      expect(JSON.parse(String(scan.stdout)).reference).toBe('R-240150');
      for (const f of folders) expect(readdirSync(at(f)), f).toEqual([]);
    } finally {
      dir.cleanup();
    }
  });
});
