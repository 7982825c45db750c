import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseFault } from '../../src/emulator/faults.js';
import { ExitCode } from '../../src/errors.js';
import { json, mockFixture, run, testServer } from '../helpers.js';

/**
 * Issue 9 item 15: every `--all` listing walks its pages with the export's pipeline
 * (api/pages.ts `fetchPagesInOrder`): pages 2..N `--concurrency` at a time (default 4), written in
 * the API's order with the bytes the one-page-at-a-time walk wrote, and a failure after records
 * reached a terminal says the output above is incomplete. (The progress line at a real terminal:
 * terminal.test.ts; a slow reader holding back requests: the unit test in paginate.test.ts.)
 */

describe('pages in flight', () => {
  // A server of 9 pages that answers pages 2..9 only once `c` of them wait at once: a walk that
  // asks for one page after another never gets an answer and fails on its --timeout.
  async function pagedServer(c: number) {
    let inFlight = 0;
    let most = 0;
    const held: Array<() => void> = [];
    const server = await testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      const body = {
        // One member holds the records: each list reads it as its list (extractList).
        records: Array.from({ length: 10 }, (_, i) => ({
          id: `r-${page}-${i}`,
          code: `C${page}.${i}`,
          name: `N${page}.${i}`,
        })),
        meta: { current_page: page, total_pages: 9, total_count: 90, next_page: page < 9 ? page + 1 : null },
      };
      inFlight++;
      most = Math.max(most, inFlight);
      const answer = (r: ServerResponse) => () => {
        inFlight--;
        json(r, 200, body);
      };
      if (page === 1) return answer(res)();
      held.push(answer(res));
      if (held.length === c) for (const a of held.splice(0)) a();
    });
    const env = {
      IMAGING_ENV: 'local',
      IMAGING_BASE_URL: server.url,
      IMAGING_CONFIG_DIR: '/nonexistent',
      IMAGING_CACHE_DIR: '/nonexistent',
    };
    return { server, env, most: () => most };
  }

  it.for(
    [
      ['referrals', 'list', '--all'],
      ['icd10', '--all', '--no-cache'],
      ['icd10', '--all'],
      ['law-firms', 'search', 'x', '--all'],
    ].map((a) => [a.join(' '), a] as const),
  )('%s: 4 pages in flight, records in the API order', async ([, args]) => {
    const { server, env, most } = await pagedServer(4);
    try {
      // A sequential walk waits out --timeout and fails; 10 s (of the test's 20) leaves room for a
      // loaded machine where a worker's event loop stalls (3 s failed once at load 9).
      const r = await run([...args, '--format', 'ndjson', '--timeout', '10000'], { env });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const ids = r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id);
      expect(ids).toEqual(Array.from({ length: 90 }, (_, i) => `r-${Math.floor(i / 10) + 1}-${i % 10}`));
      expect(most()).toBe(4);
      expect(server.seen.length).toBe(9);
    } finally {
      await server.close();
    }
  });

  it('referrals list --all --concurrency 2: 2 in flight; --concurrency without --all is a usage error', async () => {
    const { server, env, most } = await pagedServer(2);
    try {
      const r = await run(
        ['referrals', 'list', '--all', '--json', '--concurrency', '2', '--timeout', '3000'],
        {
          env,
        },
      );
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toHaveLength(90);
      expect(most()).toBe(2);
      const bad = await run(['referrals', 'list', '--concurrency', '2'], { env });
      expect(bad.code).toBe(ExitCode.usage);
      expect(bad.stderr).toContain('--concurrency is for --all');
      expect(server.seen.length).toBe(9);
    } finally {
      await server.close();
    }
  });
});

describe('the same bytes as before', () => {
  const fx = mockFixture({ referrals: 450 });
  beforeAll(() => fx.start());
  afterAll(() => fx.stop());

  it('NDJSON: what export writes, and the pages one by one joined; JSON: one pretty-printed array', async () => {
    const env = fx.env();
    const list = await run(['referrals', 'list', '--all', '--per-page', '50', '--format', 'ndjson'], { env });
    expect(list.code).toBe(0);
    const exported = await run(['referrals', 'export', '--format', 'ndjson', '--per-page', '50'], { env });
    expect(list.stdout).toBe(exported.stdout);
    let pages = '';
    for (let p = 1; p <= 9; p++) {
      const one = await run(
        ['referrals', 'list', '--page', String(p), '--per-page', '50', '--format', 'ndjson'],
        { env },
      );
      pages += one.stdout;
    }
    expect(list.stdout).toBe(pages);
    const records = list.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records).toHaveLength(450);
    const asJson = await run(['referrals', 'list', '--all', '--per-page', '50', '--json'], { env });
    expect(asJson.stdout).toBe(`${JSON.stringify(records, null, 2)}\n`);
    // --fields picks the same way page by page.
    const picked = await run(
      ['referrals', 'list', '--all', '--per-page', '50', '--json', '--fields', 'id,status'],
      { env },
    );
    expect(picked.stdout).toBe(
      `${JSON.stringify(
        records.map((r) => ({ id: r.id, status: r.status })),
        null,
        2,
      )}\n`,
    );
  });
});

describe('a page that fails after records were written', () => {
  const fx = mockFixture({ referrals: 450 });
  beforeAll(() => fx.start());
  afterAll(() => fx.stop());
  afterEach(() => fx.mock.faults.clear());
  // Pages of 50, one at a time: pages 1-3 answer, page 4 is refused (401: not retried).
  const args = ['referrals', 'list', '--all', '--per-page', '50', '--concurrency', '1'];
  const failPage4 = () => fx.mock.faults.add(parseFault('401@3', '/api/v2/referrals'));

  it.for(['ndjson', 'json'])(
    '--format %s to a terminal: "the output above is incomplete"',
    async (format) => {
      failPage4();
      const r = await run([...args, '--format', format], { env: fx.env(), stdoutIsTTY: true });
      expect(r.code).toBe(ExitCode.auth);
      expect(r.stderr).toContain('Listing stopped after 150 referrals: the output above is incomplete.');
      expect(r.stdout.length).toBeGreaterThan(0);
    },
  );

  it('piped: the error, and "the output sent to standard output is incomplete" (as export says)', async () => {
    failPage4();
    const r = await run([...args, '--format', 'ndjson'], { env: fx.env() });
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(150);
    expect(r.stderr).toContain(
      'Listing stopped after 150 referrals: the output sent to standard output is incomplete.',
    );
    expect(r.stderr).not.toContain('output above');
  });

  it('a table to a terminal: nothing was shown, so no note', async () => {
    failPage4();
    const r = await run(args, { env: fx.env(), stdoutIsTTY: true });
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain('incomplete');
  });
});
