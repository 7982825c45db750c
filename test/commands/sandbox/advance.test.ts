import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VISIT_STATUSES } from '../../../src/api/types.js';
import { answer } from '../../../src/completion/entry.js';
import { InterruptedError } from '../../../src/errors.js';
import { main } from '../../../src/main.js';
import { EVENT_NAMES } from '../../../src/webhook/events.js';
import { expectUsageError } from '../../fake-io.js';
import { BIN, fakeIO, json, mockFixture, ROOT, run, tempDir, testServer, until } from '../../helpers.js';
import { secretFileFixture } from '../../webhook-fixture.js';

const SECRET = 'whsec_sandbox_advance';
const files = secretFileFixture(SECRET);

/** `webhook listen --json` in-process on a free port: its NDJSON lines, and how to stop it. */
async function listen() {
  const ac = new AbortController();
  const fake = fakeIO();
  const done = main(['webhook', 'listen', '--port', '0', '--json', '--secret-file', files.secretFile], {
    io: fake.io,
    env: {},
    signal: ac.signal,
  });
  const port = await until(
    () =>
      Number(/Listening for webhooks on http:\/\/127\.0\.0\.1:(\d+)/.exec(fake.stderr())?.[1]) || undefined,
    'the listener',
  );
  const stop = () => {
    ac.abort(new InterruptedError('SIGINT'));
    return done;
  };
  return { port, lines: () => fake.stdout().split('\n').filter(Boolean), stop };
}

describe('imaging sandbox advance', () => {
  let listener: Awaited<ReturnType<typeof listen>>;
  let fx: ReturnType<typeof mockFixture>;
  beforeAll(async () => {
    listener = await listen();
    // The emulator delivers to the listener, signed with the secret the listener verifies with.
    fx = mockFixture({
      webhookUrl: `http://127.0.0.1:${listener.port}/hooks`,
      webhookKey: Buffer.from(SECRET),
    });
    await fx.start();
  });
  afterAll(async () => {
    await fx.stop();
    await listener.stop();
  });
  beforeEach(() => fx.reset());

  /** The first referral with `n` visits. */
  const withVisits = (n: number) => {
    for (let i = 0; i < fx.mock.referrals.total; i++) {
      const r = fx.mock.referrals.at(i);
      if (r.visits.length === n && r.visits.every((v) => v.status !== 'sent_to_rp')) return r;
    }
    throw new Error(`no referral with ${n} visits`);
  };

  it('a 404 for a visit read from its referral blames the path, not the visit', async () => {
    const r = withVisits(1);
    const d = tempDir();
    try {
      const env = fx.env({ IMAGING_CONFIG_DIR: d.path });
      await run(['config', 'set', 'path.sandbox_advance', '/api/v2/nowhere/{id}', '--env', 'local'], { env });
      const res = await run(['sandbox', 'advance', r.reference, '--to', 'booked'], { env });
      expect(res.code).toBe(4);
      expect(res.stderr).toContain(
        `hint: Visit ${r.visits[0]!.id} (of referral ${r.reference}) was read just before, so the path is likely wrong: path.sandbox_advance is set to POST /api/v2/nowhere/{id} for local`,
      );
      expect(res.stderr).not.toContain('there is no visit');
    } finally {
      d.cleanup();
    }
  });

  it('then webhook listen shows a signed visit.status_changed, verified, end to end', async () => {
    const r = withVisits(1);
    const visit = r.visits[0]!;
    const before = listener.lines().length;
    const res = await run(['sandbox', 'advance', visit.id, '--to', 'Sent-To-RP'], { env: fx.env() });
    expect(res.code, res.stderr).toBe(0);
    // The referral is named by its reference, read after the advance by the id the answer gives.
    expect(res.stdout).toBe(`Visit ${visit.id} (referral ${r.reference}): ${visit.status} → sent_to_rp\n`);
    expect(fx.apiRequests().map((q) => `${q.method} ${q.path}`)).toEqual([
      `GET /api/v2/referrals/${visit.id}`,
      `POST /api/v2/sandbox/visits/${visit.id}/advance`,
      `GET /api/v2/referrals/${r.id}`,
    ]);
    const line = await until(() => listener.lines()[before], 'the delivery');
    expect(JSON.parse(line)).toMatchObject({
      valid: true,
      event: 'visit.status_changed',
      response_status: 200,
    });
    await fx.mock.webhooks.idle(); // the emulator logs a delivery once the receiver has answered
    expect(fx.mock.webhooks.log.at(-1)).toMatchObject({ event_name: 'visit.status_changed', signed: true });
    expect(fx.mock.referrals.get(r.id)!.visits[0]!.status).toBe('sent_to_rp');
  });

  it("takes a referral's id or reference when it has one visit; several are listed, exit 2", async () => {
    const one = withVisits(1);
    const byRef = await run(['sandbox', 'advance', one.reference, '--to', 'booked', '--json'], {
      env: fx.env(),
    });
    expect(byRef.code, byRef.stderr).toBe(0);
    expect(JSON.parse(byRef.stdout)).toMatchObject({ visit_id: one.visits[0]!.id, status: 'booked' });
    const two = withVisits(2);
    fx.reset();
    const r = await run(['sandbox', 'advance', two.id.toUpperCase(), '--to', 'booked'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `referral ${two.reference} has 2 visits: name the one to advance by its visit id`,
    );
    for (const v of two.visits) expect(r.stderr).toContain(`${v.id}  ${v.modality}  ${v.status}`);
    expect(fx.apiRequests().map((q) => q.method)).toEqual(['GET']); // read, never advanced
  });

  it('checks --to like --visit-status, and refuses production, before any request (exit 2)', async () => {
    const id = withVisits(1).visits[0]!.id;
    expectUsageError(
      await run(['sandbox', 'advance', id, '--to', 'bookd'], { env: fx.env() }),
      /did you mean "booked"/,
      0,
    );
    expectUsageError(
      await run(['sandbox', 'advance', id, '--to', 'booked,complete'], { env: fx.env() }),
      /--to takes one status/,
      0,
    );
    const prod = await run(['sandbox', 'advance', id, '--to', 'booked'], {
      env: fx.env({ IMAGING_ENV: 'production', IMAGING_TOKEN: 'mock-prod' }),
    });
    expectUsageError(prod, /works on the sandbox and local environments only, not production/, 0);
    expect(fx.apiRequests()).toEqual([]);
  });

  it('--dry-run shows the body and the request, sends no advance; a newer status passes with +', async () => {
    const id = withVisits(1).visits[0]!.id;
    const r = await run(['sandbox', 'advance', id, '--to', '+on_hold', '--dry-run'], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ status: 'on_hold' });
    expect(r.stderr).toContain(`POST ${fx.mock.url}/api/v2/sandbox/visits/${id}/advance`);
    expect(fx.apiRequests().filter((q) => q.method !== 'GET')).toEqual([]);
  });
});

describe('imaging sandbox advance: the configured path, on a second server', () => {
  it('goes where path.sandbox_advance says, with the method and body, and a 404 names the key', async () => {
    const dir = tempDir();
    // Only the configured path answers: the referral read and the default path are 404 here.
    const server = await testServer((req, res) =>
      req.url?.startsWith('/api/v2/test/')
        ? json(res, 200, { ok: true })
        : json(res, 404, { error: 'not found' }),
    );
    try {
      const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path };
      const set = await run(
        ['config', 'set', 'path.sandbox_advance', 'PUT /api/v2/test/visits/{id}/status', '--env', 'local'],
        { env },
      );
      expect(set.code, set.stderr).toBe(0);
      const id = '4f8dd2dc-b12b-4d5b-81a9-d8e069295db6';
      const r = await run(['sandbox', 'advance', id, '--to', 'booked', '--json'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(server.seen.map((q) => `${q.method} ${q.url} ${q.body}`)).toEqual([
        `GET /api/v2/referrals/${id} `,
        `PUT /api/v2/test/visits/${id}/status {"status":"booked"}`,
      ]);
      await run(['config', 'unset', 'path.sandbox_advance', '--env', 'local'], { env });
      const missing = await run(['sandbox', 'advance', id, '--to', 'booked'], { env });
      expect(missing.code).toBe(4);
      expect(server.seen.at(-1)).toMatchObject({
        method: 'POST',
        url: `/api/v2/sandbox/visits/${id}/advance`,
      });
      expect(missing.stderr).toContain(
        `hint: Either there is no visit ${id} on local, or the path of the sandbox's status advancement is not published`,
      );
      expect(missing.stderr).toContain(
        "imaging config set path.sandbox_advance 'POST /api/v2/…/{id}/…' --env local",
      );
    } finally {
      await server.close();
      dir.cleanup();
    }
  });
});

describe('completion of the sandbox commands (the real binary, then its answer in-process)', () => {
  /** What `imaging __complete WORDS` prints: the real binary, else the code it runs on the built table. */
  const complete = (real: boolean, ...words: string[]) => {
    let out = '';
    if (real) out = execFileSync(process.execPath, [BIN, '__complete', ...words], { encoding: 'utf8' });
    else answer(words, join(ROOT, 'dist'), (s) => (out += s));
    return out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0]);
  };

  it('offers the group, its verbs, the values of --to and of --event', () => {
    expect(complete(true, '=sa')).toEqual(['sandbox']);
    expect(complete(false, 'sandbox', '=')).toEqual(['advance', 'fixture', 'test-webhook']);
    expect(complete(false, 'sandbox', 'advance', 'X', '--to', '=re')).toEqual([
      'ready_to_book',
      'report_uploaded',
    ]);
    expect(complete(false, 'sandbox', 'advance', 'X', '--to', '=')).toEqual([...VISIT_STATUSES]);
    expect(complete(false, 'sandbox', 'test-webhook', '--event', '=')).toEqual([...EVENT_NAMES]);
    expect(complete(false, 'referrals', 'create', '=--dr')).toEqual(['--dry-run']);
  });
});
