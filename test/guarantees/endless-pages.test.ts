import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_PAGES_WITHOUT_TOTAL } from '../../src/api/pages.js';
import { RETRY_POLICY } from '../../src/api/retry.js';
import { parseFault } from '../../src/emulator/faults.js';
import { json, mockFixture, run, tempDir, testServer } from '../helpers.js';

/**
 * Every page walker (lists with --all, `api --paginate`, export) stops with a
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
    expect(r.stderr).toContain(
      `stopped paging the ICD-10 codes after ${MAX_PAGES_WITHOUT_TOTAL.toLocaleString('en-US')} pages`,
    );
    // JSON streams page by page: what came before the stop is written, unterminated, so a script
    // reading it fails to parse as well as seeing exit 1.
    expect(r.stdout.startsWith('[\n')).toBe(true);
    expect(r.stdout.endsWith('\n]\n')).toBe(false);
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

// Servers that never end a walk: each must stop within the budget.
describe('empty pages that carry no promise of more, after page 1 promised a billion pages', () => {
  const emptyPages = [
    [
      'meta with next_page null',
      (p: number) => ({ referrals: [], meta: { current_page: p, next_page: null, total_pages: 1e9 } }),
    ],
    ['no meta', () => ({ referrals: [] })],
    ['an empty meta', () => ({ referrals: [], meta: {} })],
  ] as const;
  it.for(emptyPages)('%s: export stops at once (at most 1 + concurrency requests)', async ([, empty]) => {
    const env = await hostile((page, res) =>
      json(
        res,
        200,
        page === 1 ? { referrals: [rec(1, 1)], meta: { current_page: 1, total_pages: 1e9 } } : empty(page),
      ),
    );
    const r = await run(['referrals', 'export', '--format', 'ndjson', '--concurrency', '4'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'page 2 is empty but the server said on page 1 (1,000,000,000 pages) there are more',
    );
    noTrace(r.stderr);
    expect(apiRequests()).toBeLessThanOrEqual(5);
  });
  it.for(emptyPages)('%s: referrals list --all stops at page 2 (2 requests)', async ([, empty]) => {
    const env = await hostile((page, res) =>
      json(
        res,
        200,
        page === 1
          ? { referrals: [rec(1, 1)], meta: { current_page: 1, next_page: 2, total_pages: 1e9 } }
          : empty(page),
      ),
    );
    // One page in flight at a time (as export's tests above): with total_pages, list --all asks
    // for pages 2..N `--concurrency` at a time, the export's pipeline.
    const r = await run(['referrals', 'list', '--all', '--json', '--concurrency', '1'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('page 2 is empty but the server said on page 1');
    expect(apiRequests()).toBe(2);
  });
});

describe('the same records again with one field changed on every request', () => {
  let n = 0;
  const same = () => [
    { id: 'r-1', code: 'C1', nonce: n++ },
    { id: 'r-2', code: 'C2', nonce: n++ },
  ];
  it.for([
    ['next_page', (p: number) => ({ current_page: p, next_page: p + 1 })],
    ['total_pages 1e9', (p: number) => ({ current_page: p, next_page: p + 1, total_pages: 1e9 })],
  ] as const)('%s: export, list --all and api --paginate each stop at page 2', async ([, meta]) => {
    const env = await hostile((page, res) => json(res, 200, { referrals: same(), meta: meta(page) }));
    const cases = [
      ['referrals', 'export', '--format', 'ndjson', '--concurrency', '1'],
      ['referrals', 'list', '--all', '--json', '--concurrency', '1'],
      ['api', '/referrals', '--paginate'],
    ];
    for (const args of cases) {
      srv!.seen.length = 0;
      const r = await run(args, { env });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('page 2 repeats page 1');
      noTrace(r.stderr);
      expect(apiRequests(), args.join(' ')).toBe(2);
    }
  });

  it('records of earlier pages, shuffled: stops at the first page with nothing new', async () => {
    const env = await hostile((page, res) =>
      json(res, 200, {
        referrals:
          page <= 2
            ? [rec(page, 1), rec(page, 2)]
            : [
                { ...rec(2, 2), n: n++ },
                { ...rec(1, 1), n: n++ },
              ],
        meta: { current_page: page, next_page: page + 1 },
      }),
    );
    const r = await run(['referrals', 'list', '--all', '--json'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('page 3 repeats earlier pages (none of its records is new)');
    expect(apiRequests()).toBe(3);
  });

  it('a bare array: the same ids in another order is the end (a server that ignores page), not an error', async () => {
    const env = await hostile((_page, res) => json(res, 200, same().reverse()));
    const r = await run(['referrals', 'list', '--all', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(2);
    expect(apiRequests()).toBe(2);
  });

  it('a bare array cycling through earlier records: stops (exit 1) at the first page with nothing new', async () => {
    const env = await hostile((page, res) =>
      json(res, 200, page <= 2 ? [rec(page, 1)] : [{ ...rec(1, 1), n: n++ }]),
    );
    const r = await run(['referrals', 'export', '--format', 'ndjson'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('page 3 repeats earlier pages');
    expect(apiRequests()).toBe(3);
  });
});

describe('an empty page before the records page 1 counted (total_count)', () => {
  it('total_count 1e9, then empty pages with no meta: list --all stops at page 2 (2 requests)', async () => {
    const env = await hostile((page, res) =>
      json(
        res,
        200,
        page === 1 ? { referrals: [rec(1, 1)], meta: { next_page: 2, total_count: 1e9 } } : { referrals: [] },
      ),
    );
    const r = await run(['referrals', 'list', '--all', '--json'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'page 2 is empty but the server said on page 1 (1,000,000,000 records, 1 received)',
    );
    expect(apiRequests()).toBe(2);
  });

  it('an empty last page once every counted record came is the end, not an error', async () => {
    const env = await hostile((page, res) =>
      json(
        res,
        200,
        page === 1
          ? { referrals: [rec(1, 1), rec(1, 2)], meta: { next_page: 2, total_count: 3 } }
          : page === 2
            ? { referrals: [rec(2, 1)], meta: { next_page: 3 } }
            : { referrals: [], meta: {} },
      ),
    );
    const r = await run(['referrals', 'list', '--all', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(3);
    expect(apiRequests()).toBe(3);
  });
});

describe('records without a usable id (repeats could not be told from new records)', () => {
  // The same two records on every page, one field changed on each answer, and a total that never
  // ends: without ids nothing could tell the repeat, and the walk would run to its budget.
  let n = 0;
  const noIds = (id: (i: number) => unknown) => (page: number, res: ServerResponse) =>
    json(res, 200, {
      referrals: [1, 2].map((i) => ({
        ...(id(i) === undefined ? {} : { id: id(i) }),
        reference: `R-${i}`,
        n: n++,
      })),
      icd10_codes: [1, 2].map((i) => ({
        ...(id(i) === undefined ? {} : { id: id(i) }),
        code: `C${i}`,
        n: n++,
      })),
      meta: { current_page: page, next_page: page + 1, total_pages: 1e9 },
    });

  it.for<[string, (i: number) => unknown, string[], string]>([
    [
      'no id, referrals list --all',
      () => undefined,
      ['referrals', 'list', '--all', '--format', 'ndjson'],
      'record 1: it has no id',
    ],
    [
      'no id, referrals export',
      () => undefined,
      ['referrals', 'export', '--format', 'ndjson'],
      'record 1: it has no id',
    ],
    ['no id, icd10 --all', () => undefined, ['icd10', 'x', '--all', '--json'], 'record 1: it has no id'],
    [
      'an object id, referrals export',
      (i) => ({ x: i }),
      ['referrals', 'export', '--format', 'csv'],
      'record 1: its id is an object, not text',
    ],
  ])('%s: one request, "an answer this tool cannot read"', async ([, id, args, where]) => {
    const env = await hostile(noIds(id));
    const r = await run(args, { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: the server sent an answer this tool cannot read: ');
    expect(r.stderr).toContain(`page 1, ${where}`);
    noTrace(r.stderr);
    expect(apiRequests()).toBeLessThanOrEqual(1);
  });
});

describe('a malformed page in the concurrent export walk', () => {
  /**
   * The export's ordered-concurrent walker holds pages as bytes and parses each at its turn. A page
   * found malformed then goes on under the one retry policy, counting the sends it already took: the
   * emulator's request log shows that no page is ever sent more than RETRY_POLICY.attempts times
   * (before, the walker started a fresh retrying request: 4 sends, or 6 after earlier 5xx).
   */

  const fx = mockFixture({ referrals: 120 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    fx.reset();
    fx.mock.faults.clear();
    dir = tempDir();
  });

  afterEach(() => dir.cleanup());

  const inject = (spec: string) => fx.mock.faults.add(parseFault(spec, '/api/v2/referrals'));

  /** How many times the emulator was asked for each page of the referral list. */
  const sendsPerPage = () => {
    const sends = new Map<number, number>();
    for (const r of fx.apiRequests()) {
      const u = new URL(r.path, 'http://x');
      if (u.pathname !== '/api/v2/referrals') continue;
      const page = Number(u.searchParams.get('page'));
      sends.set(page, (sends.get(page) ?? 0) + 1);
    }
    return sends;
  };

  const exportTo = (target: string, ...extra: string[]) =>
    run(
      ['referrals', 'export', '--format', 'ndjson', '-o', target, '--per-page', '10', '--verbose', ...extra],
      {
        env: fx.env({ IMAGING_TOKEN: 'mock-page-sends' }),
      },
    );

  it('cut short once: asked again once, and the export completes with every record', async () => {
    inject('truncated:1@1'); // page 1 whole, page 2's first answer cut short
    const target = join(dir.path, 'out.ndjson');
    const r = await exportTo(target);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(`\\* malformed response body; retrying in \\d+ ms \\(try 2 of ${RETRY_POLICY.attempts}\\)`),
    );
    expect(sendsPerPage().get(2)).toBe(2);
    const ids = readFileSync(target, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    expect(ids).toEqual(fx.mock.referrals.slice(0, 120).map((x) => x.id));
  });

  it('cut short every time: the page is sent the policy attempts, no more, and the export stops', async () => {
    inject('truncated:*@1');
    const target = join(dir.path, 'out.ndjson');
    const r = await exportTo(target);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the server's answer is not valid JSON (truncated or malformed JSON");
    const sends = sendsPerPage();
    expect(sends.get(2)).toBe(RETRY_POLICY.attempts);
    expect(Math.max(...sends.values())).toBe(RETRY_POLICY.attempts);
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('after two 5xx the third answer is cut short: the policy is spent, the page is not sent a fourth time', async () => {
    inject('500:2@1'); // page 2's first two sends
    inject('truncated:1@3'); // and its third
    const target = join(dir.path, 'out.ndjson');
    const r = await exportTo(target, '--concurrency', '1');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the server's answer is not valid JSON (truncated or malformed JSON");
    expect(r.stderr).toContain('(try 3 of 3)');
    expect(r.stderr).not.toContain('try 4');
    expect(sendsPerPage().get(2)).toBe(RETRY_POLICY.attempts);
    expect(readdirSync(dir.path)).toEqual([]);
  });
});
