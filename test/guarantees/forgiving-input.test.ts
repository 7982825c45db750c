import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockFixture, run, json as sendJson, tempDir, testServer } from '../helpers.js';

/**
 * The input people get wrong, recreated against the emulator: upper-case UUIDs that found
 * nothing, a page past the end reported as "no match", counts typed with separators.
 */

const fx = mockFixture({ referrals: 300 });

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

describe('upper-case UUIDs are sent in lower case', () => {
  let referralId = '';
  let modalityId = '';
  beforeAll(async () => {
    referralId = (
      JSON.parse((await run(['referrals', 'list', '--json'], { env: fx.env() })).stdout) as Array<{
        id: string;
      }>
    )[0]!.id;
    modalityId = (
      JSON.parse((await run(['modalities', '--json'], { env: fx.env() })).stdout) as Array<{ id: string }>
    )[0]!.id;
  });

  it('referrals get', async () => {
    const r = await run(['referrals', 'get', referralId.toUpperCase(), '--json'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).id).toBe(referralId);
  });

  it('body-parts --modality', async () => {
    const lower = await run(['body-parts', '--modality', modalityId, '--json'], { env: fx.env() });
    const upper = await run(['body-parts', '--modality', modalityId.toUpperCase(), '--json'], {
      env: fx.env(),
    });
    expect(JSON.parse(lower.stdout).length).toBeGreaterThan(0);
    expect(upper.stdout).toBe(lower.stdout);
  });

  it('icd10 --ids and --param values', async () => {
    const first = (
      JSON.parse((await run(['icd10', 'knee', '--json'], { env: fx.env() })).stdout) as Array<{ id: string }>
    )[3]!.id;
    const r = await run(['icd10', '--ids', first.toUpperCase(), '--per-page', '1', '--json'], {
      env: fx.env(),
    });
    expect(JSON.parse(r.stdout)[0].id).toBe(first);
    fx.reset();
    await run(['referrals', 'list', '--param', `ids[]=${referralId.toUpperCase()}`, '--json'], {
      env: fx.env(),
    });
    expect(fx.apiRequests()[0]!.path).toContain(encodeURIComponent(referralId));
    expect(fx.apiRequests()[0]!.path).not.toContain(referralId.toUpperCase());
  });

  it('--param with a comma list of UUIDs: each in lower case, as imaging api sends them', async () => {
    const ids = (
      JSON.parse((await run(['referrals', 'list', '--json'], { env: fx.env() })).stdout) as Array<{
        id: string;
      }>
    )
      .slice(0, 2)
      .map((r) => r.id);
    const upper = ids.map((id) => id.toUpperCase()).join(',');
    const sent = async (argv: string[]) => {
      fx.reset();
      const r = await run(argv, { env: fx.env() });
      expect(r.code, r.stderr).toBe(0);
      return new URL(fx.apiRequests()[0]!.path, 'http://x').searchParams.get('ids');
    };
    expect(await sent(['referrals', 'list', '--param', `ids=${upper}`, '--json'])).toBe(ids.join(','));
    expect(await sent(['referrals', 'export', '--param', `ids=${upper}`, '-o', '/dev/null'])).toBe(
      ids.join(','),
    );
    expect(await sent(['api', 'GET', '/referrals', '-f', `ids=${upper}`])).toBe(ids.join(','));
    // Not every part a UUID: sent as given.
    expect(await sent(['referrals', 'list', '--param', `ids=${ids[0]!.toUpperCase()},ABC`, '--json'])).toBe(
      `${ids[0]!.toUpperCase()},ABC`,
    );
  });
});

describe('a page past the last one', () => {
  const cases: Array<[string, string[], RegExp]> = [
    [
      'icd10',
      ['icd10', 'knee', '--page', '99'],
      /--page 99 is past the last page: the ICD-10 codes have pages 1 to 2 \(\d+ in all\)\./,
    ],
    [
      'referrals list',
      ['referrals', 'list', '--page', '13'],
      /--page 13 is past the last page: the referrals have pages 1 to 12 \(300 in all\)\./,
    ],
    [
      'law-firms search',
      ['law-firms', 'search', 'a', '--page', '50'],
      /--page 50 is past the last page: the law firms have pages 1 to \d+/,
    ],
  ];
  for (const [name, argv, message] of cases) {
    it(`${name}: says so instead of "no match", in a table and in JSON`, async () => {
      const table = await run(argv, { env: fx.env() });
      expect(table.code).toBe(0);
      expect(table.stderr).toMatch(message);
      expect(table.stderr).not.toMatch(/match|Page \d+ of/);
      const json = await run([...argv, '--json'], { env: fx.env() });
      expect(json.stdout).toBe('[]\n');
      expect(json.stderr).toMatch(message);
    });
  }
});

describe('page counts past 999 have thousands separators, as every count in a message', () => {
  it('the page note and the past-the-last-page note of referrals list', async () => {
    // A server with 1,500 pages of one referral each (the emulator's counts stay under 1,000).
    const server = await testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      const past = page > 1500;
      sendJson(res, 200, {
        referrals: past
          ? []
          : [{ id: '8ebc7731-0fe2-467e-8ce2-6b8745680801', reference: 'R-1', status: 'pending' }],
        meta: { current_page: page, total_pages: 1500, total_count: 1500, next_page: past ? null : page + 1 },
      });
    });
    try {
      const env = {
        IMAGING_ENV: 'local',
        IMAGING_BASE_URL: server.url,
        IMAGING_CONFIG_DIR: '/nonexistent/x',
      };
      const first = await run(['referrals', 'list', '--per-page', '1'], { env });
      expect(first.code).toBe(0);
      expect(first.stderr).toContain('Page 1 of 1,500 (1,500 referrals). Next: --page 2, or --all.');
      const past = await run(['referrals', 'list', '--per-page', '1', '--page', '1600'], { env });
      expect(past.stderr).toContain('the referrals have pages 1 to 1,500 (1,500 in all).');
    } finally {
      await server.close();
    }
  });
});
