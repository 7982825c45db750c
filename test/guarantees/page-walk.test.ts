import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, run, tempDir, testServer } from '../helpers.js';

/**
 * One rule for walking pages, in every walk (list --all, export, api --paginate): a forward
 * next_page is followed, with a note, even where the server's total_pages says there are no more;
 * a walk never ends as complete while the server says there is more.
 */

const referral = (i: number) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  reference: `R${i}`,
  status: 'pending',
});

/** Three pages of two referrals whose meta is `meta(page)`. */
async function server(meta: (page: number) => Record<string, unknown>) {
  return testServer((req, res) => {
    const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
    const items = page <= 3 ? [referral(page * 2 - 1), referral(page * 2)] : [];
    json(res, 200, { referrals: items, meta: { current_page: page, ...meta(page) } });
  });
}

const ids = (ndjson: string) =>
  ndjson
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { id: string }).id);
const all = [1, 2, 3, 4, 5, 6].map((i) => referral(i).id);

describe('total_pages 0 with next_page 2 (a third-party emulator)', () => {
  let s: Awaited<ReturnType<typeof server>>;
  const dir = tempDir();
  beforeAll(async () => {
    s = await server((page) => ({ total_pages: 0, next_page: page < 3 ? page + 1 : null }));
  });
  afterAll(async () => {
    await s.close();
    dir.cleanup();
  });
  const env = () => ({ IMAGING_ENV: 'local', IMAGING_BASE_URL: s.url, IMAGING_CONFIG_DIR: dir.path });

  it('referrals list --all follows next_page to the end, and says so', async () => {
    const r = await run(['referrals', 'list', '--all', '--format', 'ndjson'], { env: env() });
    expect(r.code).toBe(0);
    expect(ids(r.stdout)).toEqual(all);
    expect(r.stderr).toMatch(/total_pages 0 but next_page 2; following next_page/);
    expect(s.seen.map((x) => new URL(x.url, 'http://x').searchParams.get('page'))).toEqual(['1', '2', '3']);
  });

  it('referrals export does the same', async () => {
    const out = join(dir.path, 'all.ndjson');
    const r = await run(['referrals', 'export', '-o', out], { env: env() });
    expect(r.code).toBe(0);
    expect(ids(readFileSync(out, 'utf8'))).toEqual(all);
    expect(r.stderr).toMatch(/following next_page/);
  });

  it('api --paginate does the same', async () => {
    const r = await run(['api', '/referrals', '--paginate', '--format', 'ndjson'], { env: env() });
    expect(r.code).toBe(0);
    expect(ids(r.stdout)).toEqual(all);
    expect(r.stderr).toMatch(/following next_page/);
  });
});

describe('the last page of total_pages names a next one', () => {
  let s: Awaited<ReturnType<typeof server>>;
  beforeAll(async () => {
    s = await server((page) => ({ total_pages: 2, next_page: page < 3 ? page + 1 : null }));
  });
  afterAll(() => s.close());

  it('referrals list --all goes on to it, and says so', async () => {
    const r = await run(['referrals', 'list', '--all', '--format', 'ndjson'], {
      env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: s.url, IMAGING_CONFIG_DIR: '/nonexistent' },
    });
    expect(r.code).toBe(0);
    expect(ids(r.stdout)).toEqual(all);
    expect(r.stderr).toMatch(/page 2 of the referrals is the last of total_pages 2 but says next_page 3/);
  });
});
