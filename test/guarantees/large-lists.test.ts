import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, testServer } from '../helpers.js';

/**
 * Lists far larger than the call stack's argument limit (about 120,000): the writer and the page
 * walk take records one by one, never a page spread into a call's arguments.
 */

const N = 200_000;
const referral = (i: number) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  reference: `R${i}`,
  status: 'pending',
});
/** Referrals from..to-1 as the JSON text of a list, written as JSON.stringify writes them. */
const referralsJson = (from: number, to: number) => {
  const parts: string[] = [];
  for (let i = from; i < to; i++)
    parts.push(
      `{"id":"00000000-0000-4000-8000-${String(i).padStart(12, '0')}","reference":"R${i}","status":"pending"}`,
    );
  return `[${parts.join(',')}]`;
};

describe(`one page of ${N.toLocaleString('en')} records`, () => {
  let server: Awaited<ReturnType<typeof testServer>>;
  let page: string;
  beforeAll(async () => {
    // Sent as one prepared body: the server is not what is measured.
    page = `{"referrals":${referralsJson(0, N)},"meta":{"current_page":1,"total_pages":1,"total_count":${N}}}`;
    server = await testServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(page);
    });
  });
  afterAll(() => server.close());
  const env = () => ({
    IMAGING_ENV: 'local',
    IMAGING_BASE_URL: server.url,
    IMAGING_CONFIG_DIR: '/nonexistent',
  });

  it.each(['table', 'csv'])(
    'referrals list --format %s writes every record',
    async (format) => {
      const r = await run(['referrals', 'list', '--per-page', '1000', '--format', format], { env: env() });
      expect(r.stderr).not.toMatch(/stack|internal/i);
      expect(r.code).toBe(0);
      const lines = r.stdout.split(/\r?\n/).filter((l) => l !== '');
      // A header line (table, CSV), the brackets (JSON): every record is there.
      expect(r.stdout).toContain(referral(N - 1).id);
      expect(lines.length).toBeGreaterThanOrEqual(N);
    },
    60_000,
  );

  it('api --paginate gathers the page into one JSON array', async () => {
    const r = await run(['api', '/referrals', '--paginate'], { env: env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as unknown[]).length).toBe(N);
  }, 60_000);
});

describe('referrals list --all of 130,000 referrals', () => {
  const total = 130_000;
  let server: Awaited<ReturnType<typeof testServer>>;
  beforeAll(async () => {
    // Pages of a list of `total` referrals, as the API pages them.
    server = await testServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const page = Number(url.searchParams.get('page') ?? 1);
      const per = Number(url.searchParams.get('per_page') ?? 100);
      const pages = Math.ceil(total / per);
      const items = referralsJson((page - 1) * per, Math.min(total, page * per));
      const meta = {
        current_page: page,
        total_pages: pages,
        total_count: total,
        next_page: page < pages ? page + 1 : null,
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"referrals":${items},"meta":${JSON.stringify(meta)}}`);
    });
  });
  afterAll(() => server.close());

  it('as a table: every referral, once', async () => {
    const r = await run(['referrals', 'list', '--all', '--per-page', '1000'], {
      env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: '/nonexistent' },
    });
    expect(r.stderr).not.toMatch(/stack|internal/i);
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => l !== '');
    expect(rows.length).toBe(total + 1); // the header, then one line each
    expect(new Set(rows).size).toBe(total + 1);
  }, 120_000);
});
