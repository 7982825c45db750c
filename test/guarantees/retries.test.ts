import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import '../reliability.js';
import { RETRY_POLICY } from '../../src/api/retry.js';
import { type FaultMode, parseFault } from '../../src/emulator/faults.js';
import { mockFixture, type RunOptions, run as runCli, tempDir } from '../helpers.js';

const JSON_TYPE = { 'content-type': 'application/json' };

/**
 * The fault suite: each fault the emulator can inject, and what a user sees. GETs are retried and
 * succeed after a transient fault; POSTs are never repeated; exports complete with every record or
 * fail with exit 1/3/6 leaving no file; every message is one clear block with no stack trace.
 */

const fx = mockFixture({ referrals: 120, faultDelayMs: 1500 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
let dir: ReturnType<typeof tempDir>;
/**
 * The client's clock, injected: every back-off and `Retry-After` wait is recorded here and returns
 * at once, so no test waits out real seconds and each can check how long the client would have
 * waited. The default back-off (300 ms, doubled, each half random) is kept to be checked too.
 */
let waited: number[] = [];
const sleep = async (ms: number) => {
  waited.push(ms);
};
const run = (argv: string[], opts: RunOptions = {}) =>
  runCli(argv, { ...opts, deps: { ...opts.deps, clientOverrides: { baseDelayMs: 300, sleep } } });
beforeEach(() => {
  waited = [];
  fx.reset();
  fx.mock.faults.clear();
  for (const k of Object.keys(fx.mock.faults.injected)) delete fx.mock.faults.injected[k];
  dir = tempDir();
});
afterEach(() => dir.cleanup());

const inject = (spec: string, path?: string) => fx.mock.faults.add(parseFault(spec, path));
const injectedCount = () => Object.values(fx.mock.faults.injected).reduce((a, b) => a + b, 0);
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);
// Short client timeout so the `slow` fault (1.5 s) counts as a timeout.
const env = () => fx.env({ IMAGING_TOKEN: 'mock-fault-suite' });

describe('a GET meets a transient fault, is retried, and succeeds', () => {
  it.for<[FaultMode, string[]]>([
    ['500', []],
    ['502', []],
    ['reset', []],
    ['truncated', []],
    ['429', []],
    ['slow', ['--timeout', '300']],
  ])('%s', async ([mode, extra], { task }) => {
    inject(`${mode}:1`);
    const r = await run(['cpt', '73721', '--json', '--verbose', ...extra], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(6);
    expect(fx.mock.faults.injected[mode]).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`retrying in \\d+ ms \\(try 2 of ${RETRY_POLICY.attempts}\\)`));
    expect(waited).toHaveLength(1);
    if (mode === '429') {
      expect(r.stderr).toContain('retrying in 1000 ms'); // Retry-After honoured
      expect(waited).toEqual([1000]);
    } else {
      // First back-off: 300 ms halved, plus up to as much again at random.
      expect(waited[0]).toBeGreaterThanOrEqual(150);
      expect(waited[0]).toBeLessThanOrEqual(300);
    }
    noStack(r.stderr);
  });
});

describe('a GET meets a persistent fault: one clear error, the right exit code', () => {
  it.for<[FaultMode, number, RegExp]>([
    ['500', 1, /error: Internal server error\n {2}status: {5}500 Internal Server Error/],
    ['502', 1, /HTML page \("502 Bad Gateway"\), probably from a proxy or gateway/],
    ['reset', 1, /connection reset by http:\/\/127\.0\.0\.1:\d+|network error/],
    ['truncated', 1, /not valid JSON \(truncated or malformed JSON/],
    ['401', 3, /code: {7}api_token_expired/],
  ])('%s -> exit %i', async ([mode, code, message], { task }) => {
    inject(`${mode}:*`);
    const r = await run(['cpt', '73721'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')[0]).toMatch(/^error: /);
    noStack(r.stderr);
    expect(fx.apiRequests()).toHaveLength(mode === '401' ? 1 : RETRY_POLICY.attempts);
    if (mode !== '401') {
      expect(waited).toHaveLength(RETRY_POLICY.attempts - 1);
      expect(waited[1]).toBeGreaterThanOrEqual(300); // the second back-off doubles
      expect(waited[1]).toBeLessThanOrEqual(600);
    }
  });

  it("a 429 with a Retry-After is tried the policy's attempts, then exit 6", async ({ task }) => {
    inject('429:*');
    const r = await run(['cpt', '73721'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('rate_limited');
    expect(fx.apiRequests()).toHaveLength(RETRY_POLICY.attempts);
    expect(waited).toEqual(Array(RETRY_POLICY.attempts - 1).fill(1000)); // the emulator's Retry-After: 1, before each retry
  });

  it('a slow answer past --timeout, every time: exit 1 naming the timeout', async ({ task }) => {
    inject('slow:*');
    // Every answer is slow (1.5 s), so any timeout shorter than that is met by all three tries.
    const r = await run(['modalities', '--timeout', '50'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('request timed out after 50 ms');
    expect(r.stderr).toContain('hint: Raise the limit with --timeout <ms>.');
  });
});

describe('a POST is never repeated', () => {
  it.for<[string, string[], string | undefined]>([
    [
      'law-firms create',
      ['law-firms', 'create', '--name', 'Fault Test LLP', '--city', 'Reno', '--state', 'NV'],
      undefined,
    ],
    [
      'referrals create',
      ['referrals', 'create', '--file', '-'],
      '{"patient":{"first_name":"A","last_name":"B"}}',
    ],
    ['sso', ['sso'], undefined],
    ['api POST', ['api', 'POST', '/patients', '-f', 'first_name=A', '-f', 'last_name=B'], undefined],
  ])('%s meets a 500: sent exactly once', async ([, argv, stdin], { task }) => {
    inject('500:1');
    const r = await run(argv, { env: env(), ...(stdin !== undefined ? { stdin } : {}) });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(1);
    const posts = fx.apiRequests().filter((q) => q.method === 'POST');
    expect(posts).toHaveLength(1);
    expect(posts[0]!.status).toBe(500);
    noStack(r.stderr);
  });

  it('a POST whose connection is reset is not sent again', async ({ task }) => {
    inject('reset:1');
    const r = await run(['sso'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(1);
    expect(fx.apiRequests().filter((q) => q.method === 'POST')).toHaveLength(1);
  });
});

describe('exports complete with every record, or fail and leave no file', () => {
  it.for<FaultMode>(['500', '502', 'reset', 'truncated', '429'])(
    'a transient %s on a later page: complete, every record once',
    async (mode, { task }) => {
      inject(`${mode}:1@2`, '/api/v2/referrals');
      const target = join(dir.path, 'out.ndjson');
      const r = await run(['referrals', 'export', '--format', 'ndjson', '-o', target, '--per-page', '10'], {
        env: env(),
      });
      task.meta.faultsInjected = injectedCount();
      expect(r.code).toBe(0);
      const { readFileSync } = await import('node:fs');
      const ids = readFileSync(target, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).id);
      expect(ids).toEqual(fx.mock.referrals.slice(0, 120).map((x) => x.id));
      if (mode === '429') expect(waited).toEqual([1000]);
      expect(readdirSync(dir.path)).toEqual(['out.ndjson']);
    },
  );

  it.for<[string, string, number]>([
    ['a persistent 500', '500:*@3', 1],
    ['HTML from a proxy, every time', '502:*@3', 1],
    ['the token expiring mid-export', '401:*@4', 3],
    ['the sandbox allowance running out', 'quota', 6],
    ['connections reset, every time', 'reset:*@2', 1],
  ])('%s: exit %i, no file at the target, no temporary file', async ([, spec, code], { task }) => {
    const target = join(dir.path, 'out.csv');
    if (spec === 'quota') {
      // The sandbox quota: a new emulator with an allowance of 5 successful requests.
      const { startMockServer } = await import('../../src/emulator/server.js');
      const limited = await startMockServer({ port: 0, referrals: 120, allowance: 5 });
      try {
        const r = await run(['referrals', 'export', '-o', target, '--per-page', '10'], {
          env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: limited.url, IMAGING_CONFIG_DIR: dir.path },
        });
        task.meta.faultsInjected = 1;
        expect(r.code).toBe(code);
        expect(r.stderr).toContain('sandbox_request_limit_reached');
        expect(readdirSync(dir.path)).toEqual([]);
        noStack(r.stderr);
      } finally {
        await limited.close();
      }
      return;
    }
    inject(spec, '/api/v2/referrals');
    const r = await run(['referrals', 'export', '-o', target, '--per-page', '10'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(/Export stopped after \d+ referrals: no file was written at/);
    expect(readdirSync(dir.path)).toEqual([]);
    noStack(r.stderr);
  });
});

describe('the fault injection itself', () => {
  it('parses MODE[:COUNT][@AFTER] and refuses anything else', () => {
    expect(parseFault('500')).toMatchObject({ mode: '500', count: 1, after: 0 });
    expect(parseFault('reset:3@10')).toMatchObject({ mode: 'reset', count: 3, after: 10 });
    expect(parseFault('slow:*').count).toBe(Number.POSITIVE_INFINITY);
    expect(() => parseFault('503')).toThrow(/MODE\[:COUNT\]\[@AFTER\]/);
  });

  it('can be set at run time through POST /__mock/faults', async () => {
    const res = await fetch(`${fx.mock.url}/__mock/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fault: '502:1' }),
    });
    expect(res.status).toBe(201);
    const r = await run(['modalities'], { env: env() });
    expect(r.code).toBe(0);
    expect(fx.mock.faults.injected['502']).toBe(1);
    expect(
      (
        await fetch(`${fx.mock.url}/__mock/faults`, {
          method: 'POST',
          headers: JSON_TYPE,
          body: '{"fault":"nope"}',
        })
      ).status,
    ).toBe(422);
  });

  it('imaging mock --fault rejects a bad spec (exit 2)', async () => {
    const r = await run(['mock', '--port', '0', '--fault', 'explode']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--fault: fault "explode" is not MODE');
  });
});
