import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PAGES_WITHOUT_TOTAL } from '../../src/api/paginate.js';
import { json, run, testServer } from '../helpers.js';

/**
 * Issue 8 item 7: every page walker (lists with --all, `api --paginate`, export) stops with a
 * clear error (exit 1) against a hostile server the test starts on 127.0.0.1, and the number of
 * requests that server sees stays small. Each test states its bound.
 */

type Srv = Awaited<ReturnType<typeof testServer>>;
let srv: Srv | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

const pageOf = (req: IncomingMessage) =>
  Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
const rec = (page: number, i: number) => ({ id: `r-${page}-${i}`, code: `C${page}.${i}` });

async function hostile(handler: (page: number, res: ServerResponse) => void) {
  srv = await testServer((req, res) => handler(pageOf(req), res));
  return { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: '/nonexistent' };
}
const apiRequests = () => srv!.seen.filter((r) => r.url.startsWith('/api/')).length;
const noTrace = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);

describe('a next_page that never ends', () => {
  it('the same page again and again: referrals list --all stops at page 2 (2 requests)', async () => {
    const env = await hostile((page, res) =>
      json(res, 200, {
        referrals: [rec(1, 1), rec(1, 2)],
        meta: { current_page: page, next_page: page + 1 },
      }),
    );
    const r = await run(['referrals', 'list', '--all', '--json'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('page 2 repeats page 1');
    noTrace(r.stderr);
    expect(apiRequests()).toBe(2);
  });

  it('new records on every page but no totals: icd10 --all stops at the ceiling (1,000 requests)', async () => {
    const env = await hostile((page, res) =>
      json(res, 200, { icd10_codes: [rec(page, 1)], meta: { current_page: page, next_page: page + 1 } }),
    );
    const r = await run(['icd10', 'x', '--all', '--json'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`stopped paging the ICD-10 codes after ${MAX_PAGES_WITHOUT_TOTAL} pages`);
    expect(r.stdout).toBe('');
    expect(apiRequests()).toBe(MAX_PAGES_WITHOUT_TOTAL);
  });

  it('new records past total_count: law-firms search --all stops at the budget (total 3 pages + 3 slack)', async () => {
    const env = await hostile((page, res) =>
      json(res, 200, {
        law_firms: Array.from({ length: 10 }, (_, i) => rec(page, i)),
        meta: { current_page: page, next_page: page + 1, total_count: 30 },
      }),
    );
    const r = await run(['law-firms', 'search', 'x', '--all', '--json'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('budget 6 pages');
    expect(apiRequests()).toBe(6);
  });

  it('api --paginate stops too (2 requests)', async () => {
    const env = await hostile((page, res) =>
      json(res, 200, { payments: [{ id: 1 }], meta: { current_page: page, next_page: page + 1 } }),
    );
    const r = await run(['api', '/payments', '--paginate'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('page 2 repeats page 1');
    expect(apiRequests()).toBe(2);
  });
});

describe('total_pages 1e9 with empty pages', () => {
  it('export stops at the first empty page: at most 1 + concurrency + 1 requests', async () => {
    const env = await hostile((page, res) =>
      json(res, 200, {
        referrals: page === 1 ? [rec(1, 1)] : [],
        meta: { current_page: page, total_pages: 1e9, total_count: 1e9 },
      }),
    );
    const r = await run(['referrals', 'export', '--format', 'ndjson', '--concurrency', '4'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('page 2 is empty but the server says there are more');
    noTrace(r.stderr);
    expect(apiRequests()).toBeLessThanOrEqual(6);
  });

  it('referrals list --all stops at page 2 (2 requests)', async () => {
    const env = await hostile((page, res) =>
      json(res, 200, {
        referrals: page === 1 ? [rec(1, 1)] : [],
        meta: { current_page: page, total_pages: 1e9 },
      }),
    );
    const r = await run(['referrals', 'list', '--all', '--json'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('page 2 is empty but the server says there are more');
    expect(apiRequests()).toBe(2);
  });
});

describe('a bare-array list alternating two pages', () => {
  const alternating = (page: number, res: ServerResponse) =>
    json(res, 200, page % 2 === 1 ? [rec(1, 1), rec(1, 2)] : [rec(2, 1), rec(2, 2)]);

  it('referrals list --all stops at page 3 (3 requests)', async () => {
    const env = await hostile(alternating);
    const r = await run(['referrals', 'list', '--all', '--json'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('page 3 repeats page 1');
    expect(apiRequests()).toBe(3);
  });

  it('export stops at page 3 (3 requests), and no partial output is taken for complete', async () => {
    const env = await hostile(alternating);
    const r = await run(['referrals', 'export', '--format', 'ndjson'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('page 3 repeats page 1');
    expect(r.stderr).toContain('Export stopped after');
    expect(apiRequests()).toBe(3);
  });

  it('a server that ignores page (page 2 = page 1) is still just the end, not an error', async () => {
    const env = await hostile((_page, res) => json(res, 200, [rec(1, 1)]));
    const r = await run(['referrals', 'list', '--all', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(1);
    expect(apiRequests()).toBe(2);
  });
});

describe('referrals seen twice across pages', () => {
  const shifting = (page: number, res: ServerResponse) =>
    json(res, 200, {
      referrals: page === 1 ? [rec(1, 1), rec(1, 2)] : [rec(1, 2), rec(2, 1)],
      meta: { current_page: page, total_pages: 2, total_count: 4, next_page: page === 1 ? 2 : null },
    });

  it('export writes each once and reports the count', async () => {
    const env = await hostile(shifting);
    const r = await run(['referrals', 'export', '--format', 'ndjson'], { env });
    expect(r.code).toBe(0);
    const ids = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    expect(ids).toEqual(['r-1-1', 'r-1-2', 'r-2-1']);
    expect(r.stderr).toContain('1 referral came again on a later page (same id) and was written once');
  });

  it('list --all shows each once and reports the count', async () => {
    const env = await hostile(shifting);
    const r = await run(['referrals', 'list', '--all', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).map((x: { id: string }) => x.id)).toEqual(['r-1-1', 'r-1-2', 'r-2-1']);
    expect(r.stderr).toContain('1 record came again on a later page');
  });
});
