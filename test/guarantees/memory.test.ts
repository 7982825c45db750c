import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageWalk } from '../../src/api/pages.js';
import { main } from '../../src/main.js';
import { BIN, fakeIO, json, mockFixture, run, tempDir, testServer } from '../helpers.js';

/**
 * Bounded memory for the commands that walk every page, on the real binary: lists stream page by
 * page instead of collecting every record, and the launcher keeps V8's young generation from
 * growing past 8 MB (README "Speed" has the peak RSS this gives, measured by `npm run bench`).
 * What the export no longer does, each checked where it happens: a page-sized string per page,
 * ICU's number formatting (~7 MB resident for a comma), a walk that keeps text of every page.
 */

const fx = mockFixture({ referrals: 2000 });
const dir = tempDir('imaging-memory-');
// Preloaded into the binary: the largest young generation (one semi-space) seen after any GC.
const probe = join(dir.path, 'young.cjs');
writeFileSync(
  probe,
  `const v8 = require('node:v8');
const { PerformanceObserver } = require('node:perf_hooks');
let max = 0;
new PerformanceObserver(() => {
  const y = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  max = Math.max(max, y.space_size);
}).observe({ entryTypes: ['gc'] });
process.on('exit', () => require('node:fs').writeFileSync(process.env.PROBE_OUT, String(max)));
`,
);
beforeAll(() => fx.start());
afterAll(async () => {
  await fx.stop();
  dir.cleanup();
});

let runs = 0;

// Preloaded into the binary too: any use of ICU's number formatting (toLocaleString on a number,
// Intl.NumberFormat).
const watch = join(dir.path, 'watch.cjs');
writeFileSync(
  watch,
  `const seen = { numberFormat: [] };
const toLocale = Number.prototype.toLocaleString;
Number.prototype.toLocaleString = function (...args) {
  seen.numberFormat.push(new Error('toLocaleString').stack.split('\\n').slice(1, 4).join(' '));
  return toLocale.apply(this, args);
};
const NF = Intl.NumberFormat;
Intl.NumberFormat = function (...args) {
  seen.numberFormat.push('Intl.NumberFormat');
  return new NF(...args);
};
process.on('exit', () => require('node:fs').writeFileSync(process.env.WATCH_OUT, JSON.stringify(seen)));
`,
);

/** One run of the binary with both probes: its young generation in MB, and its ICU number formatting. */
async function probed(args: string[]): Promise<{ youngMb: number; numberFormat: string[] }> {
  const n = ++runs; // files of its own: the runs below go at once
  const young = join(dir.path, `young-${n}.txt`);
  const watched = join(dir.path, `watch-${n}.json`);
  const r = await execa(process.execPath, ['--require', probe, '--require', watch, BIN, ...args], {
    reject: false,
    env: { ...fx.env(), PROBE_OUT: young, WATCH_OUT: watched },
    extendEnv: false,
    timeout: 20_000,
  });
  expect(r.stderr).not.toMatch(/error/i);
  expect(r.exitCode).toBe(0);
  return {
    youngMb: Number(readFileSync(young, 'utf8')) / (1024 * 1024),
    numberFormat: (JSON.parse(readFileSync(watched, 'utf8')) as { numberFormat: string[] }).numberFormat,
  };
}

// 8 MB, or one step more: the cap is applied after a GC, from Node's GC notifications. Node 26's
// V8 keeps its young generation near 8 MB by itself, tuned or not, in uneven steps (2, 4, 5.5, 7.5,
// 8), and now and then grows one step past it (9.75 and 11.75 MB seen in .ci/run, with and without
// the tuning); there the bound is that step. Left alone, Nodes 20-24 grow it to 12-16 MB. Since
// `list --all` parses pages as the export does, several back to back, a late step was seen at 10.5
// MB on Node 24 (.ci/run): the bound there is 11 MB, still below what an untuned run reaches.
const YOUNG_LIMIT_MB = Number(process.versions.node.split('.')[0]) >= 26 ? 12 : 11;

describe('list --all streams: page 1 reaches the reader before the last page is asked for', () => {
  // A server of 4 pages that holds page 4 until the reader has page 1's last record: a command
  // that collects every page before printing never gets it (and fails on its --timeout).
  it.for(['json', 'ndjson'])('--format %s', async (format) => {
    let output = '';
    let release: (() => void) | undefined;
    const page1Seen = () => output.includes('"ref-1-49"');
    const server = await testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      const body = {
        referrals: Array.from({ length: 50 }, (_, i) => ({ id: `ref-${page}-${i}`, note: 'x'.repeat(200) })),
        meta: { current_page: page, total_pages: 4, total_count: 200, next_page: page < 4 ? page + 1 : null },
      };
      if (page === 4 && !page1Seen()) release = () => json(res, 200, body);
      else json(res, 200, body);
    });
    try {
      // --format json through the real binary and its stdout pipe; ndjson in-process, its output
      // seen as it is written (the same streaming code; the binary's pipe is proved by json).
      const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path };
      const args = ['referrals', 'list', '--all', '--format', format, '--timeout', '3000'];
      const seen = (d: Buffer | string) => {
        output += d;
        if (release && page1Seen()) {
          release();
          release = undefined;
        }
      };
      let stderr = '';
      let code: number | null;
      if (format === 'json') {
        const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env } });
        child.stderr.on('data', (d) => (stderr += d));
        child.stdout.on('data', seen);
        code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      } else {
        const { io, stderr: err } = fakeIO();
        const stdout = new Writable({
          write(chunk: Buffer, _enc, cb) {
            seen(chunk.toString('utf8'));
            cb();
          },
        });
        code = await main(args, { io: { ...io, stdout }, env: { PATH: process.env.PATH, ...env } });
        stderr = err();
      }
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const ids =
        format === 'json'
          ? (JSON.parse(output) as Array<{ id: string }>).map((r) => r.id)
          : output
              .trimEnd()
              .split('\n')
              .map((l) => (JSON.parse(l) as { id: string }).id);
      expect(ids).toHaveLength(200);
      expect(ids[0]).toBe('ref-1-0');
      expect(ids[199]).toBe('ref-4-49');
      expect(server.seen.map((s) => new URL(s.url, 'http://x').searchParams.get('page'))).toEqual([
        '1',
        '2',
        '3',
        '4',
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('what an export or list --all holds', () => {
  // Each run carries both probes, concurrently: each figure is the child's own (its heap, its
  // parses); the emulator only serves. The in-process walk below runs alone, after them: it
  // measures this heap. The young generation is held to 8 MB for the commands that walk every page:
  // 2,000 referrals (20 pages, ~60 MB allocated), where V8 left alone grows it to 12-16 MB.
  it.concurrent.for([
    { name: 'export (CSV)', args: ['referrals', 'export', '-o', 'x.csv'] },
    { name: 'list --all --format ndjson', args: ['referrals', 'list', '--all', '--format', 'ndjson'] },
  ])('$name: the young generation stays at 8 MB, and no ICU number formatting', async ({ args }) => {
    const seen = await probed(args.map((a) => (a.startsWith('x.') ? join(dir.path, a) : a)));
    // The summary ("Exported 2,000 referral rows") and any count are grouped without ICU.
    expect(seen.numberFormat).toEqual([]);
    expect(seen.youngMb).toBeLessThanOrEqual(YOUNG_LIMIT_MB);
  });

  // The other formats' writers, in-process (ICU is a matter of the code called, not of the
  // process), with the same watch on this process's number formatting while they run.
  it.for([
    { name: 'export --format ndjson', args: ['referrals', 'export', '--format', 'ndjson', '-o', 'x.ndjson'] },
    { name: 'list --all --format json', args: ['referrals', 'list', '--all', '--format', 'json'] },
  ])('$name: no ICU number formatting', async ({ args }) => {
    const calls: string[] = [];
    const toLocale = Number.prototype.toLocaleString;
    const NF = Intl.NumberFormat;
    Number.prototype.toLocaleString = function (this: number, ...a: Parameters<number['toLocaleString']>) {
      calls.push('toLocaleString');
      return toLocale.apply(this, a);
    };
    Intl.NumberFormat = new Proxy(NF, {
      apply: (target, _this, a: ConstructorParameters<typeof Intl.NumberFormat>) => {
        calls.push('Intl.NumberFormat');
        return target(...a);
      },
      construct: (target, a: ConstructorParameters<typeof Intl.NumberFormat>) => {
        calls.push('Intl.NumberFormat');
        return new target(...a);
      },
    });
    try {
      const r = await run(
        args.map((a) => (a.startsWith('x.') ? join(dir.path, a) : a)),
        { env: fx.env() },
      );
      expect(r.stderr).not.toMatch(/error/i);
      expect(r.code).toBe(0);
      // The watch sees the calls made here.
      expect((2000).toLocaleString('en-US')).toBe('2,000');
      expect(new Intl.NumberFormat('en-US').format(2000)).toBe('2,000');
    } finally {
      Number.prototype.toLocaleString = toLocale;
      Intl.NumberFormat = NF;
    }
    expect(calls).toEqual(['toLocaleString', 'Intl.NumberFormat']);
  });

  it('a page walk keeps a few bytes per page, not the text of its records', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const walk = new PageWalk('the referrals', { requireIds: true });
    const filler = 'x'.repeat(20_000);
    const page = (n: number) => [
      { id: `first-${n}`, note: `${n}${filler}` },
      { id: `last-${n}`, note: `${filler}${n}` },
    ];
    walk.accept(1, page(1), { total_pages: 500 });
    gc();
    const before = process.memoryUsage().heapUsed;
    // Its first and last records as text, kept per page: 500 pages x 40 KB = 20 MB.
    for (let n = 2; n <= 500; n++) expect(walk.accept(n, page(n), { total_pages: 500 })).toHaveLength(2);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // Under 2 KB a page (1 MB for 500): a walk keeping even a few KB of each page's text fails.
    expect(grown).toBeLessThan(1024 * 1024);
    // Still a walk: a page repeated is caught.
    expect(() => walk.accept(501, page(7), { total_pages: 500 })).toThrow(/repeats page 7/);
  });
});

describe('answers copied into reused buffers (transport.ts Body)', () => {
  it('a page sent in many small chunks, with no length given, arrives whole, every page', async () => {
    // Chunked transfer, 1,000-byte writes: the buffer grows many times within a page, and the
    // next pages are copied into the buffers the earlier ones gave back.
    const note = (p: number, i: number) => `${p}-${i} Nguyễn 김 ${'é'.repeat(1500)} end`;
    const server = await testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      const body = Buffer.from(
        JSON.stringify({
          referrals: Array.from({ length: 100 }, (_, i) => ({ id: `ref-${page}-${i}`, note: note(page, i) })),
          meta: { current_page: page, total_pages: 6, total_count: 600 },
        }),
      );
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let at = 0; at < body.length; at += 1000) res.write(body.subarray(at, at + 1000));
      res.end();
    });
    try {
      // In-process: the same transport reads the same chunks from a real server.
      const r = await run(['referrals', 'list', '--all', '--format', 'ndjson'], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path },
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const records = r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; note: string });
      expect(records).toHaveLength(600);
      records.forEach((rec, k) => {
        const p = Math.floor(k / 100) + 1;
        const i = k % 100;
        expect(rec).toEqual({ id: `ref-${p}-${i}`, note: note(p, i) });
      });
    } finally {
      await server.close();
    }
  });
});
