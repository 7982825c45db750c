import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, hasEscapes, onTerminal, piped, plain } from '../../fake-io.js';
import { json, mockFixture, run, tempDir, testServer, until } from '../../helpers.js';
import '../../reliability.js';

// The emulator completes an attempt after autoBookDelayMs; its address picks the outcome.
const fx = mockFixture({ autoBookDelayMs: 40 });
const slow = mockFixture({ autoBookDelayMs: 60_000 });
beforeAll(async () => {
  await fx.start();
  await slow.start();
});
afterAll(async () => {
  await fx.stop();
  await slow.stop();
});
beforeEach(() => fx.reset());

/** Runs `fn` with a config folder of its own (the tests against a second server run at once). */
async function inConfigDir<T>(fn: (path: string) => Promise<T>): Promise<T> {
  const dir = tempDir();
  try {
    return await fn(dir.path);
  } finally {
    dir.cleanup();
  }
}

const ID = '3212c76a-c27e-4ca2-9e90-bb9c865c1630'; // R-240001 of the emulator's data
const BOOK = ['referrals', 'auto-book', 'R-240001', '--strategy', 'closest', '--radius', '25'];
const posts = () => fx.apiRequests().filter((q) => q.method === 'POST');

describe('imaging referrals auto-book', () => {
  it('submits the request and says how to see the outcome (both forms)', async () => {
    const t = await onTerminal(BOOK, { env: fx.env() });
    expect(t.code, t.stderr).toBe(0);
    expect(plain(t.stdout)).toBe('Auto-book of R-240001 submitted: processing (closest, radius 25).\n');
    expect(t.stderr).toContain(
      'See the outcome with: imaging referrals get R-240001 --env local --fields auto_book_request',
    );
    fx.reset();
    const p = await piped([...BOOK.slice(0, 2), ID, ...BOOK.slice(3)], { env: fx.env() });
    expect(p.code, p.stderr).toBe(0);
    expect(hasEscapes(p.stdout + p.stderr)).toBe(false);
    expect(p.stdout).toBe(`Auto-book of ${ID} submitted: processing (closest, radius 25).\n`);
    expect(posts().map((q) => q.path)).toEqual([`/api/v2/referrals/${ID}/auto_book`]);
  });

  it('--wait reads the referral until the attempt completes: booked and contacted_for_booking exit 0', async () => {
    const t = await onTerminal([...BOOK, '--wait'], { env: fx.env() });
    expect(t.code, t.stderr).toBe(0);
    expect(plain(t.stdout)).toMatch(
      /^Auto-book of R-240001: booked \(completed \d{4}-\d\d-\d\d \d\d:\d\d UTC\)\.\n$/,
    );
    expect(t.stderr).toContain(
      'Submitted: processing (closest, radius 25); waiting for the outcome, up to 10m.',
    );
    const reads = fx.apiRequests().filter((q) => q.method === 'GET' && q.path === `/api/v2/referrals/${ID}`);
    expect(reads.length).toBeGreaterThanOrEqual(1);
    const c = await piped([...BOOK, '--address', '1 Contacted For Booking Ave', '--wait', '--json'], {
      env: fx.env(),
    });
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout)).toMatchObject({
      status: 'completed',
      strategy: 'closest',
      radius: 25,
      address: '1 Contacted For Booking Ave',
      outcome: 'contacted_for_booking',
    });
  });

  it.for([
    ['2 No Availability Rd', 'no_availability'],
    ['3 booking_failed St', 'booking_failed'],
  ])('--wait: %s ends with %s, exit 10, the outcome said', async ([address, outcome]) => {
    const r = await piped([...BOOK, '--address', address!, '--wait'], { env: fx.env() });
    expect(r.code).toBe(10);
    expect(r.stdout).toMatch(new RegExp(`^Auto-book of R-240001: ${outcome} \\(completed `));
    expect(r.stderr).toContain(`error: the auto-book of R-240001 ended with ${outcome}`);
    expect(r.stderr.match(/^hint:/gm)).toHaveLength(1);
  });

  it('--wait --within: exit 9 when the attempt is still processing', async () => {
    const r = await piped([...BOOK, '--wait', '--within', '0s'], { env: slow.env() });
    expect(r.code).toBe(9);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'error: not yet: the auto-book request of R-240001 is still processing after 0s',
    );
  });

  it('an interrupted wait exits 130; the request stays submitted', async () => {
    const controller = new AbortController();
    slow.reset();
    const waiting = piped(
      ['referrals', 'auto-book', ID, '--strategy', 'soonest', '--radius', '9', '--wait'],
      {
        env: slow.env(),
        deps: { signal: controller.signal },
      },
    );
    await until(() => (slow.apiRequests().some((q) => q.method === 'GET') ? true : undefined), 'a read');
    controller.abort();
    const r = await waiting;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Ctrl-C stops waiting; the request goes on.');
    expect(r.stderr).toContain(
      `interrupted\nStopped waiting; the auto-book request goes on. See its outcome with: imaging referrals get ${ID} --env local --fields auto_book_request\n`,
    );
    expect(slow.apiRequests().filter((q) => q.method === 'POST')).toHaveLength(1);
  });

  it.for([
    [['--radius', '0'], /--radius must be between 1 and 250, not 0/],
    [['--radius', '251'], /--radius must be between 1 and 250, not 251/],
    [['--radius', '-3'], /--radius must be between 1 and 250, not -3/],
    [['--radius', 'ten'], /--radius must be a whole number, 1 to 250\./],
    [['--strategy', 'nearest'], /--strategy: unknown strategy "nearest"/],
    [['--strategy', 'closest-soonest', '--within', '1m'], /--within goes with --wait/],
    [['--webhook-url', 'ftp://x.example/'], /--webhook-url needs an http\(s\) URL/],
  ] as Array<[string[], RegExp]>)('%j is refused before any request (exit 2)', async ([flags, message]) => {
    const r = await piped([...BOOK, ...flags], { env: fx.env() });
    expectUsageError(r, message, fx.apiRequests().length);
  });

  it('--strategy and --radius are required; a near miss is suggested', async () => {
    const none = await piped(['referrals', 'auto-book', 'R-240001', '--radius', '5'], { env: fx.env() });
    expectUsageError(none, /--strategy is required/, fx.apiRequests().length);
    const noRadius = await piped(['referrals', 'auto-book', 'R-240001', '--strategy', 'soonest'], {
      env: fx.env(),
    });
    expectUsageError(noRadius, /--radius is required/, fx.apiRequests().length);
    const typo = await piped([...BOOK, '--strategy', 'closets'], { env: fx.env() });
    expect(typo.stderr).toContain('Did you mean closest?');
  });

  it('--dry-run shows the request and sends nothing that books', async () => {
    const r = await piped([...BOOK, '--address', '1 Main St', '--dry-run', '--json'], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      method: 'POST',
      url: `${fx.mock.url}/api/v2/referrals/${ID}/auto_book`,
      body: { auto_book_request: { strategy: 'closest', radius: 25, address: '1 Main St' } },
    });
    expect(posts()).toEqual([]);
  });

  it('403 endpoint_not_enabled says auto-book is enabled per account (exit 5)', async () => {
    const r = await piped(BOOK, { env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }) });
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('hint: Auto-book ("auto-book submission" in the API) is enabled per account');
    expect(r.stderr).toContain('to enable auto-book for your group on local');
  });

  it('in production: refused without a terminal or --yes, sent with --yes', () =>
    inConfigDir(async (configDir) => {
      const prod = {
        IMAGING_ENV: 'production',
        IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
        IMAGING_TOKEN: 'mock-prod',
        IMAGING_CONFIG_DIR: configDir,
      };
      const refused = await piped(BOOK, { env: prod });
      expectUsageError(
        refused,
        /an auto-book request in production needs confirmation/,
        fx.apiRequests().length,
      );
      const declined = await run(BOOK, {
        env: prod,
        stdinIsTTY: true,
        deps: { prompter: { secret: async () => '', confirm: async () => false } },
      });
      expect(declined.code).toBe(1);
      expect(posts()).toEqual([]);
      const yes = await piped([...BOOK, '--yes'], { env: prod });
      expect(yes.code, yes.stderr).toBe(0);
      expect(posts()).toHaveLength(1);
    }));

  it('--webhook-url: noted as unsigned by design, and the emulator delivers it there unsigned', async () => {
    const receiver = await testServer((_req, res) => json(res, 200, {}));
    fx.allowWebhookPort(receiver.port);
    try {
      const r = await piped([...BOOK, '--webhook-url', `${receiver.url}/hooks`, '--wait'], { env: fx.env() });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('referral.auto_book_completed sent to --webhook-url arrives unsigned');
      const got = await until(() => receiver.seen[0], 'the delivery');
      expect(got.url).toBe('/hooks');
      expect(got.headers['x-service-event']).toBe('referral.auto_book_completed');
      expect(got.headers['x-service-signature']).toBeUndefined();
      expect(JSON.parse(got.body).auto_book_request).toMatchObject({
        status: 'completed',
        outcome: 'booked',
      });
    } finally {
      await receiver.close();
    }
  });
});

// Each test with a server and a config folder of its own: they run at once.
describe.concurrent('referrals auto-book against a second real server', () => {
  const request = {
    id: 'ab9b6f0e-7c1d-4c55-9d0a-1f7b8e2a0c11',
    strategy: 'soonest',
    radius: 40,
    address: null,
  };

  it('goes to path.auto_book with its method and exactly the body given; --wait reads the outcome', () =>
    inConfigDir(async (configDir) => {
      let reads = 0;
      const server = await testServer((req, res) => {
        if (req.method !== 'GET')
          return json(res, 201, { auto_book_request: { ...request, status: 'processing' } });
        reads++;
        const status = reads < 2 ? 'processing' : 'completed';
        const outcome = reads < 2 ? null : 'booked';
        return json(res, 200, {
          id: ID,
          reference: 'R-240001',
          auto_book_request: { ...request, status, outcome },
        });
      });
      try {
        const env = fx.env({ IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: configDir });
        expect(
          (await piped(['config', 'set', 'path.auto_book', 'PUT /api/v2/booking/{id}/attempts'], { env }))
            .code,
        ).toBe(0);
        const r = await piped(
          [
            'referrals',
            'auto-book',
            ID,
            '--strategy',
            'soonest',
            '--radius',
            '40',
            '--webhook-url',
            'https://hooks.example.com/ab',
            '--wait',
          ],
          { env },
        );
        expect(r.code, r.stderr).toBe(0);
        expect(server.seen[0]).toMatchObject({
          method: 'PUT',
          url: `/api/v2/booking/${ID}/attempts`,
          body: JSON.stringify({
            auto_book_request: {
              strategy: 'soonest',
              radius: 40,
              webhook_url: 'https://hooks.example.com/ab',
            },
          }),
        });
        expect(server.seen.slice(1).map((q) => `${q.method} ${q.url}`)).toEqual([
          `GET /api/v2/referrals/${ID}`,
          `GET /api/v2/referrals/${ID}`,
        ]);
        expect(r.stdout).toBe(`Auto-book of ${ID}: booked.\n`);
      } finally {
        await server.close();
      }
    }));

  it.for([
    ['the server clock agrees', undefined, 0],
    ['the server clock is days behind (its Date header is used)', 'Sun, 01 Nov 2026 00:00:00 GMT', 0],
    [
      'this one was created and done just before the Date of the answer',
      'Sun, 01 Nov 2026 00:00:00 GMT',
      -6_000,
    ],
  ] as Array<[string, string | undefined, number]>)(
    '--wait without a request id ignores an earlier completed request (%s)',
    ([, serverDate, offset]) =>
      inConfigDir(async (configDir) => {
        // The answer carries no id; the referral first still shows an outcome from before the submission.
        const now = () => (serverDate ? Date.parse(serverDate) + 5_000 : Date.now());
        const old = { ...request, status: 'completed', outcome: 'no_availability', completed_at: '' };
        old.completed_at = new Date(now() - 86_400_000).toISOString();
        let reads = 0;
        const server = await testServer((req, res) => {
          const date: Record<string, string> = serverDate ? { date: serverDate } : {};
          if (req.method !== 'GET') return json(res, 202, {}, date);
          reads++;
          const fresh = {
            ...request,
            id: 'c0ffee00-0000-4000-8000-000000000001',
            status: 'completed',
            created_at: new Date(now() + offset - 500).toISOString(),
          };
          const current =
            reads < 3
              ? old
              : { ...fresh, outcome: 'booked', completed_at: new Date(now() + offset).toISOString() };
          return json(res, 200, { id: ID, reference: 'R-240001', auto_book_request: current }, date);
        });
        try {
          const env = fx.env({ IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: configDir });
          const r = await piped([...BOOK.slice(0, 2), ID, ...BOOK.slice(3), '--wait', '--within', '30s'], {
            env,
          });
          expect(r.code, r.stderr).toBe(0);
          expect(r.stdout).toMatch(new RegExp(`^Auto-book of ${ID}: booked \\(completed `));
          expect(r.stderr).toContain('Note: the referral still shows an earlier auto-book request');
          expect(reads).toBe(3);
        } finally {
          await server.close();
        }
      }),
  );

  it('a 404 from the default path names path.auto_book', () =>
    inConfigDir(async (configDir) => {
      const server = await testServer((_req, res) =>
        json(res, 404, { error: 'Not Found', message: 'Not Found' }),
      );
      try {
        const r = await piped(['referrals', 'auto-book', ID, '--strategy', 'closest', '--radius', '1'], {
          env: fx.env({ IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: configDir }),
        });
        expect(r.code).toBe(4);
        expect(r.stderr).toContain(
          `hint: Either there is no referral ${ID} on local, or the path of the auto-book submission is not published (the default, POST /api/v2/referrals/{id}/auto_book, is a guess); set it with: imaging config set path.auto_book 'POST /api/v2/…/{id}/…' --env local`,
        );
      } finally {
        await server.close();
      }
    }));
});
