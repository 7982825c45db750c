import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, type ApiRequest } from '../../src/api/client.js';
import { ALL_PER_PAGE, extractList, fetchPagesInOrder, nextPageFrom } from '../../src/api/pages.js';
import { UnreadableAnswerError } from '../../src/errors.js';
import { clean } from '../../src/output/text.js';
import { json, testServer } from '../helpers.js';

/** Every page of a bare-array list, one after another, as `api --paginate` walks it. */
const walk = (c: ApiClient) =>
  fetchPagesInOrder(
    c,
    {
      path: '/referrals',
      query: {},
      perPage: ALL_PER_PAGE,
      concurrency: 1,
      requireIds: false,
      parsed: true,
      what: 'the list',
      listName: 'the list',
    },
    new AbortController().signal,
  );

describe('extractList', () => {
  it('reads { <items>, meta }', () => {
    const l = extractList({ referrals: [{ id: 1 }], meta: { total_pages: 2 } });
    expect(l).toEqual({ items: [{ id: 1 }], meta: { total_pages: 2 }, key: 'referrals' });
  });
  it('reads a bare array', () => {
    expect(extractList([{ id: 1 }])).toEqual({ items: [{ id: 1 }], meta: undefined, key: undefined });
  });
  it('prefers the named member when there are several arrays', () => {
    expect(extractList({ a: [1], icd10_codes: [2], meta: {} }, 'icd10_codes').items).toEqual([2]);
    expect(() => extractList({ a: [1], b: [2] })).toThrow(
      /cannot read: the list: 2 members are lists; cannot tell which/,
    );
  });
  it('explains an answer with no array', () => {
    expect(() => extractList({ meta: {} })).toThrow(
      /cannot read: the list is an object with no list of records in it$/,
    );
    expect(() => extractList(null, 'referrals')).toThrow(UnreadableAnswerError);
  });
});

describe('nextPageFrom', () => {
  it('follows next_page, then total_pages', () => {
    expect(nextPageFrom({ next_page: 3 }, 2)).toBe(3);
    expect(nextPageFrom({ next_page: null, total_pages: 9 }, 2)).toBeUndefined();
    expect(nextPageFrom({ current_page: 2, total_pages: 3 }, 2)).toBe(3);
    expect(nextPageFrom({ current_page: 3, total_pages: 3 }, 3)).toBeUndefined();
    expect(nextPageFrom(undefined, 1)).toBeUndefined();
  });
});

describe('paginate over a bare array', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(() => close?.());

  it('asks for pages until one comes back empty (a short page may be a per_page cap)', async () => {
    const all = Array.from({ length: 250 }, (_, i) => ({ id: i }));
    const s = await testServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const page = Number(u.searchParams.get('page'));
      const per = Number(u.searchParams.get('per_page'));
      json(res, 200, all.slice((page - 1) * per, page * per));
    });
    close = s.close;
    const c = new ApiClient({ baseUrl: s.url, token: 't', timeoutMs: 1000, clean });
    const got: unknown[] = [];
    for await (const p of walk(c)) for (const r of p.items) got.push(r);
    expect(got).toEqual(all);
    expect(s.seen.map((r) => r.url)).toEqual(
      [1, 2, 3, 4].map((p) => `/api/v2/referrals?page=${p}&per_page=100`),
    );
  });

  it('gets every record when the server caps per_page below what was asked', async () => {
    const all = Array.from({ length: 130 }, (_, i) => ({ id: i }));
    const s = await testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page'));
      json(res, 200, all.slice((page - 1) * 40, page * 40));
    });
    close = s.close;
    const c = new ApiClient({ baseUrl: s.url, token: 't', timeoutMs: 1000, clean });
    const got: unknown[] = [];
    for await (const p of walk(c)) for (const r of p.items) got.push(r);
    expect(got).toEqual(all);
  });

  it('stops when a server ignores page and repeats itself', async () => {
    const s = await testServer((_req, res) =>
      json(
        res,
        200,
        Array.from({ length: 100 }, (_, i) => ({ id: i })),
      ),
    );
    close = s.close;
    const c = new ApiClient({ baseUrl: s.url, token: 't', timeoutMs: 1000, clean });
    const got: unknown[] = [];
    for await (const p of walk(c)) for (const r of p.items) got.push(r);
    expect(got).toHaveLength(100); // the repeated page is not yielded again
  });
});

describe('fetchPagesInOrder holds at most `concurrency` pages for a reader that does not take them', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(() => close?.());

  // The walk `list --all` and export share: a page is asked for only as the reader takes one, so a
  // reader that stops (a pipe nobody reads: the writer waits for 'drain' before taking the next
  // page) holds the walk at `concurrency` pages received and waiting, not all of them.
  it.for([1, 4])('concurrency %i', async (concurrency) => {
    const s = await testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page'));
      json(res, 200, {
        referrals: Array.from({ length: 10 }, (_, i) => ({ id: `r-${page}-${i}` })),
        meta: { current_page: page, total_pages: 20 },
      });
    });
    close = s.close;
    const c = new ApiClient({ baseUrl: s.url, token: 't', timeoutMs: 1000, clean });
    // Every answer the walk asked for, to wait until all of them are in (bytes held by the walk).
    const answers: Promise<unknown>[] = [];
    const request = c.request.bind(c);
    c.request = <T>(req: ApiRequest) => {
      const p = request<T>(req);
      answers.push(p);
      return p;
    };
    const pages = fetchPagesInOrder(
      c,
      {
        path: '/referrals',
        key: 'referrals',
        query: {},
        perPage: 10,
        concurrency,
        what: 'the referrals',
        listName: 'the referral list',
      },
      new AbortController().signal,
    );
    const settled = async () => {
      await Promise.allSettled(answers);
      await new Promise((r) => setImmediate(r));
    };
    const ids: string[] = [];
    for (let taken = 1; taken <= 20; taken++) {
      const next = await pages.next();
      expect(next.done).toBe(false);
      if (!next.done) ids.push(...next.value.items.map((r) => (r as { id: string }).id));
      // The reader stops here: every page asked for has come in, and no other is asked for.
      await settled();
      expect(s.seen.length).toBe(taken === 1 ? 1 : Math.min(20, taken + concurrency));
    }
    expect((await pages.next()).done).toBe(true);
    expect(ids).toHaveLength(200);
    expect(ids[199]).toBe('r-20-9');
  });
});
