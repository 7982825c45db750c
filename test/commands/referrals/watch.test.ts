import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../../src/api/types.js';
import { stepOf } from '../../../src/emulator/advance.js';
import { parseFault } from '../../../src/emulator/faults.js';
import { HOSTILE } from '../../../src/emulator/hostile.js';
import { PROGRESS, reached, type Standing, standing } from '../../../src/referrals/progress.js';
import { expectUsageError, hasEscapes, lines, piped, plain } from '../../fake-io.js';
import { json, launcher, mockFixture, run, tempDir, testServer } from '../../helpers.js';
import { paneFixture } from '../../terminal.js';

const fx = mockFixture({ referrals: 600 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());

const UNTIL = ['report_uploaded'];
/** Referrals of the emulator's data that stand so against report_uploaded (they do not move here). */
const standingAs = (want: Standing): Referral[] =>
  fx.mock.referrals.slice(0, 600).filter((r) => r.visits.length > 0 && standing(r.visits, UNTIL) === want);

type Fixture = ReturnType<typeof mockFixture>;
/**
 * An emulator of the test's own, with the same data as `fx` (the same seed): the tests that wait on
 * real intervals run at once, each counting its own requests.
 */
async function ownEmulator<T>(
  fn: (m: Fixture, polls: (id: string) => number) => Promise<T>,
  referrals = 600,
): Promise<T> {
  const m = mockFixture({ referrals });
  await m.start();
  try {
    return await fn(m, (id) => m.apiRequests().filter((r) => r.path === `/api/v2/referrals/${id}`).length);
  } finally {
    await m.stop();
  }
}

// Two kinds of test, run side by side: those that wait on real intervals (the 1s floor against the
// emulator), at once, each with an emulator or server of its own; and those on the shared emulator
// `fx`, one at a time (each counts its requests), in the gaps. vitest runs at most five tests of a
// file at once, in the order they are declared: the longest waits first.

describe.concurrent('imaging referrals watch: the longer waits', () => {
  describe.concurrent('imaging referrals watch: stopped and on a terminal', () => {
    const panes = paneFixture();

    it('the live table at 80 columns, updated in place', async () => {
      await ownEmulator(async (m, polls) => {
        const ids = [...standingAs('waiting').slice(0, 2), ...standingAs('done').slice(0, 1)].map(
          (r) => r.id,
        );
        const pane = await panes.run(['referrals', 'watch', ...ids, '--interval', '1s'], m.env(), 80);
        await pane.waitForScreen((s) => s.some((l) => l.includes('next poll in')));
        const before = polls(ids[0]!);
        for (let i = 0; i < 300 && polls(ids[0]!) < before + 2; i++)
          await new Promise((r) => setTimeout(r, 10));
        const screen = await pane.waitForScreen((s) => s.some((l) => l.includes('next poll in')));
        expect(screen.filter((l) => l.startsWith('Watching 3 referrals'))).toHaveLength(1);
        expect(screen.filter((l) => /^REFERENCE +STATE/.test(l))).toHaveLength(1);
        for (const l of screen) expect(plain(l).length).toBeLessThanOrEqual(80);
        expect(screen.join('\n')).toMatch(/1 done, 2 waiting · next poll in \ds · Ctrl-C stops/);
        await pane.keys('C-c');
        expect(await pane.exited()).toBe(130);
        const last = await pane.screen();
        expect(last.join('\n')).toContain('1 done, 2 waiting · stopped');
      });
    });
  });

  describe.concurrent('imaging referrals watch: the outcome', () => {
    // One watch proves both: it waits on the same intervals.
    it('one request a referral an interval; a reference is read through the list, and that answer is its first read', async () => {
      await ownEmulator(async (m, polls) => {
        const [done] = standingAs('done');
        const r = await piped(['referrals', 'watch', done!.reference.toLowerCase()], { env: m.env() });
        expect(r.code).toBe(0);
        expect(m.apiRequests()).toHaveLength(1);
        expect(m.apiRequests()[0]!.path).toMatch(/^\/api\/v2\/referrals\?/);
        m.reset();
        // One by its id, one by its reference.
        const [byId, byReference] = standingAs('waiting');
        const w = await piped(
          ['referrals', 'watch', byId!.id, byReference!.reference, '--interval', '1s', '--within', '2s'],
          { env: m.env() },
        );
        expect(w.code).toBe(9);
        // Reads at 0s, 1s and 2s at most.
        expect(polls(byId!.id)).toBeGreaterThanOrEqual(2);
        expect(polls(byId!.id)).toBeLessThanOrEqual(3);
        // The list's answer was the reference's first read: one read fewer, in the same rounds.
        expect(polls(byReference!.id)).toBe(polls(byId!.id) - 1);
        const lists = m.apiRequests().filter((q) => q.path.startsWith('/api/v2/referrals?'));
        expect(lists).toHaveLength(1);
        expect(m.apiRequests()).toHaveLength(1 + polls(byId!.id) + polls(byReference!.id));
      });
    });
  });

  describe.concurrent('imaging referrals watch: a server that fails for a while', () => {
    it('a dropped connection, a 500 and a gateway 502 page are retried and shown, never fatal, the next read later', async () => {
      const [done] = standingAs('done');
      // Each kind of failure against an emulator of its own, all at once.
      await Promise.all(
        ['reset', '500', '502'].map((mode) =>
          ownEmulator(async (m, polls) => {
            // Every send of the first read fails (the client's own retries too); the next interval's read answers.
            m.mock.faults.add(parseFault(`${mode}:3`));
            const t0 = Date.now();
            const r = await piped(['referrals', 'watch', done!.id, '--interval', '1s'], { env: m.env() });
            expect(r.code).toBe(0);
            // A round that read nothing: the next one waits twice the interval.
            expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
            expect(r.stderr).toMatch(/warning: 1 referral not read: .+; trying again next interval/);
            expect(r.stderr).not.toMatch(/HTTP (\d{3}).*HTTP \1/);
            expect(r.stderr).not.toMatch(/^error:/m);
            expect(polls(done!.id)).toBe(4);
          }),
        ),
      );
    });
  });

  describe.concurrent('imaging referrals watch: many referrals', () => {
    // The CPU of an export and of rounds of reads, spent while the other tests wait.
    it('500 referrals with a short interval: each read once an interval until it is finished', async () => {
      // 20 awaited among 480 finished (of a larger emulator's data): the first round reads all 500, the
      // next ones only what is still awaited. Stopped (as by Ctrl-C) once each awaited one has been
      // read again: a condition, however long a round takes on a busy machine.
      await ownEmulator(async (m) => {
        const data = m.mock.referrals.slice(0, 3000).filter((r) => r.visits.length > 0);
        const of = (want: Standing) =>
          data.filter((r) => standing(r.visits, UNTIL) === want).map((r) => r.id);
        const waiting = of('waiting').slice(0, 20);
        const ids = [...waiting, ...[...of('done'), ...of('cannot')].slice(0, 480)];
        expect(new Set(ids).size).toBe(500);
        const readsOf = () => {
          const n = new Map<string, number>();
          for (const q of m.apiRequests()) n.set(q.path, (n.get(q.path) ?? 0) + 1);
          return (id: string) => n.get(`/api/v2/referrals/${id}`) ?? 0;
        };
        const stop = new AbortController();
        const t0 = Date.now();
        const watching = piped(['referrals', 'watch', '--from', '-', '--interval', '1s'], {
          env: m.env(),
          stdin: ids.join('\n'),
          deps: { signal: stop.signal },
        });
        for (let reads = readsOf(); !waiting.every((id) => reads(id) >= 2); reads = readsOf())
          await new Promise((r) => setTimeout(r, 20));
        stop.abort();
        const r = await watching;
        const rounds = Math.floor((Date.now() - t0) / 1000) + 1;
        expect(r.code).toBe(130);
        expect(r.stderr).toMatch(/^Watching 500 referrals/);
        expect(m.apiRequests().every((q) => q.status === 200)).toBe(true);
        const reads = readsOf();
        // Each one read, a finished one only once, an awaited one again each interval (no more often).
        for (const id of ids) {
          expect(reads(id)).toBeGreaterThanOrEqual(waiting.includes(id) ? 2 : 1);
          expect(reads(id)).toBeLessThanOrEqual(waiting.includes(id) ? rounds : 1);
        }
      }, 3000);
    });

    it('--from an export CSV, and IDs one a line on stdin', async () => {
      // An emulator of 100 referrals: the whole export is watched (the 500 above are the many).
      await ownEmulator(async (m) => {
        const dir = tempDir();
        try {
          const csv = join(dir.path, 'r.csv');
          const exported = await run(['referrals', 'export', '-o', csv], { env: m.env() });
          expect(exported.code).toBe(0);
          m.reset();
          const r = await piped(['referrals', 'watch', '--from', csv, '--within', '0s'], { env: m.env() });
          expect([9, 10]).toContain(r.code);
          expect(r.stderr).toMatch(/^Watching 100 referrals until report_uploaded/);
          expect(m.apiRequests()).toHaveLength(100);
          const ids = m.mock.referrals
            .slice(0, 100)
            .filter((x) => x.visits.length > 0 && standing(x.visits, UNTIL) === 'done')
            .slice(0, 3)
            .map((x) => x.id);
          expect(ids).toHaveLength(3);
          writeFileSync(join(dir.path, 'ids.txt'), `${ids.join('\n')}\n`);
          m.reset();
          const s = await piped(['referrals', 'watch', '--from', '-'], {
            env: m.env(),
            stdin: `# awaited\n${ids.join('\n')}\n${ids[0]}\n`,
          });
          expect(s.code).toBe(0);
          expect(s.stderr).toContain('done: all 3 referrals reached report_uploaded');
          expect(m.apiRequests()).toHaveLength(3);
        } finally {
          dir.cleanup();
        }
      }, 100);
    });
  });
});

describe.concurrent('imaging referrals watch: the shorter waits', () => {
  describe.concurrent('imaging referrals watch: answers that cannot be read', () => {
    type Answer = 'html' | 'garbage' | 'other' | 'no id';
    /**
     * A real server standing in for the API, one per watch: `answers` says what each read of the
     * referral gets, in turn; past its end, the referral as it is. A second referral, done, is read
     * beside it: a round that read something, so the next read comes one interval later (a round that
     * read nothing waits twice as long, above).
     */
    async function standIn<T>(
      answers: Answer[],
      fn: (env: NodeJS.ProcessEnv, reads: () => number) => Promise<T>,
    ): Promise<T> {
      const [target, beside] = standingAs('done') as [Referral, Referral];
      const [stranger] = standingAs('cannot') as [Referral];
      const server = await testServer((req, res) => {
        if (req.url === `/api/v2/referrals/${beside.id}`) return json(res, 200, beside);
        if (req.url !== `/api/v2/referrals/${target.id}`) return json(res, 404, { error: 'not found' });
        const next = answers.shift();
        if (next === 'html') {
          res.writeHead(200, { 'content-type': 'text/html' });
          return res.end('<html><body>Gateway maintenance</body></html>');
        }
        if (next === 'garbage') {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('{"id": "\u0000garb');
        }
        if (next === 'no id') return json(res, 200, { status: 'ok' });
        json(res, 200, next === 'other' ? stranger : target);
      });
      const config = tempDir();
      try {
        const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: config.path };
        return await fn(
          env,
          () => server.seen.filter((r) => r.url === `/api/v2/referrals/${target.id}`).length,
        );
      } finally {
        await server.close();
        config.cleanup();
      }
    }
    const target = () => standingAs('done')[0]!;
    const stranger = () => standingAs('cannot')[0]!;
    const watch = () => ['referrals', 'watch', target().id, standingAs('done')[1]!.id, '--interval', '1s'];

    it('a burst of 200 answers that are not JSON is a warning and a read at the next interval, never fatal', async () => {
      // The first read: every send of it (the client's own retries too) is a web page or garbage; the
      // second: garbage once, then the referral.
      await standIn(['html', 'garbage', 'html', 'garbage'], async (env, reads) => {
        const r = await piped(watch(), { env });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(
          /warning: 1 referral not read: the server's answer is not valid JSON \((an HTML page, not JSON|truncated or malformed JSON, \d+ bytes)\): GET .+; trying again next interval/,
        );
        expect(r.stderr).not.toMatch(/^error:/m);
        expect(r.stderr).toContain('done: all 2 referrals reached report_uploaded');
        expect(r.stdout).toMatch(new RegExp(`^${target().reference} +done +`, 'm'));
        expect(reads()).toBe(5);
      });
    });

    it("an answer carrying another referral's id is refused as unreadable, never reported as this one's state", async () => {
      await Promise.all([
        standIn(['other'], async (env) => {
          const r = await piped(watch(), { env });
          // The other referral cannot reach report_uploaded: taken for this one, the watch would end 10.
          expect(r.code, r.stderr).toBe(0);
          expect(r.stderr).toContain(
            `warning: 1 referral not read: the server sent an answer this tool cannot read: the referral ${target().id}: the answer is referral ${stranger().id}, not the one asked for; trying again next interval`,
          );
          expect(r.stderr).not.toContain(stranger().reference);
          expect(r.stdout).toMatch(new RegExp(`^${target().reference} +done +`, 'm'));
        }),
        // A JSON answer that names no referral at all (a proxy's {"status":"ok"}) is not read either.
        standIn(['no id'], async (env) => {
          const none = await piped(watch(), { env });
          expect(none.code, none.stderr).toBe(0);
          expect(none.stderr).toContain(
            `warning: 1 referral not read: the server sent an answer this tool cannot read: the referral ${target().id}: the answer has no id; trying again next interval`,
          );
        }),
      ]);
    });
  });

  describe.concurrent('imaging referrals watch: visits that move', () => {
    /** Referrals each of whose visits gets to report_uploaded as the emulator advances it. */
    const reaching = (rs: Referral[], steps: number) =>
      rs.filter(
        (r) =>
          r.visits.length > 0 &&
          !r.visits.some((v) => reached(v.status, 'report_uploaded')) &&
          r.visits.every((v) => reached(stepped(v, steps), 'report_uploaded')) &&
          !r.visits.every((v) => reached(stepped(v, steps - 1), 'report_uploaded')),
      );
    const stepped = (v: Referral['visits'][number], steps: number) => {
      let s = v.status;
      for (let i = 0; i < steps; i++) s = stepOf(v.id, s);
      return s;
    };

    async function moving<T>(fn: (m: ReturnType<typeof mockFixture>, ids: string[]) => Promise<T>) {
      const m = mockFixture({ referrals: 60, advanceEveryMs: 250 });
      await m.start();
      try {
        const ids = reaching(m.mock.referrals.slice(0, 60), 3)
          .slice(0, 2)
          .map((r) => r.id);
        expect(ids).toHaveLength(2);
        return await fn(m, ids);
      } finally {
        await m.stop();
      }
    }

    it('piped: one line per change (time, reference, visit, modality, previous → new), then the last state', async () => {
      await moving(async (m, ids) => {
        const r = await piped(['referrals', 'watch', ...ids, '--interval', '1s', '--within', '20s'], {
          env: m.env(),
        });
        expect(r.code).toBe(0);
        expect(hasEscapes(r.stdout)).toBe(false);
        const changes = lines(r.stdout).filter((l) => l.includes('→'));
        expect(changes.length).toBeGreaterThan(0);
        for (const line of changes)
          expect(line).toMatch(
            /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ {2}R-\d+ {2}visit \d+ \S.* {2}[a-z_]+ → [a-z_]+$/,
          );
        expect(r.stdout).toMatch(/^REFERENCE +STATE/m);
      });
    });

    it('--format ndjson: one visit.status_changed event per change, the last state on stderr', async () => {
      await moving(async (m, ids) => {
        const r = await piped(['referrals', 'watch', ...ids, '--interval', '1s', '--format', 'ndjson'], {
          env: m.env(),
        });
        expect(r.code).toBe(0);
        const events = lines(r.stdout).map((l) => JSON.parse(l));
        expect(events.length).toBeGreaterThan(0);
        for (const e of events) {
          expect(Object.keys(e)).toEqual([
            'event_name',
            'reference',
            'referral_id',
            'visit_id',
            'modality',
            'status',
            'changes',
            'occurred_at',
          ]);
          expect(e.event_name).toBe('visit.status_changed');
          expect(ids).toContain(e.referral_id);
          expect(e.changes.status).toHaveLength(2);
          expect(e.changes.status[1]).toBe(e.status);
          expect(PROGRESS.indexOf(e.changes.status[1])).toBeGreaterThan(
            PROGRESS.indexOf(e.changes.status[0]),
          );
          expect(Number.isNaN(Date.parse(e.occurred_at))).toBe(false);
        }
        expect(r.stderr).toMatch(/^REFERENCE +STATE/m);
      });
    });
  });

  /**
   * Watches `watched` (referrals of one visit, the records to answer) on a terminal of `columns`,
   * against a server of their own: ready_to_book at each one's first read, contacted_for_booking after.
   */
  async function watchOneStep(watched: Referral[], columns: number): Promise<string> {
    const reads = new Map<string, number>();
    const h = await testServer((req, res) => {
      const r = watched.find((x) => req.url?.endsWith(`/referrals/${x.id}`));
      if (!r) return json(res, 404, { error: 'not found' });
      const n = (reads.get(r.id) ?? 0) + 1;
      reads.set(r.id, n);
      const visit = { ...r.visits[0]!, status: n === 1 ? 'ready_to_book' : 'contacted_for_booking' };
      json(res, 200, { ...r, visits: [visit] } as unknown as Record<string, unknown>);
    });
    const config = tempDir();
    try {
      const env = {
        IMAGING_ENV: 'local',
        IMAGING_BASE_URL: h.url,
        IMAGING_CONFIG_DIR: config.path,
        TZ: 'UTC',
      };
      const args = ['referrals', 'watch', ...watched.map((r) => r.id), '--until', 'contacted_for_booking'];
      const tty = await run([...args, '--interval', '1s'], {
        env,
        stdoutIsTTY: true,
        stderrIsTTY: true,
        columns,
      });
      expect(tty.code, tty.stderr).toBe(0);
      return plain(tty.stdout)
        .replace(/\u001b\[[0-9;]*[A-Za-z]/g, '')
        .replace(/\r/g, '');
    } finally {
      await h.close();
      config.cleanup();
    }
  }
  const oneVisit = () => fx.mock.referrals.slice(0, 600).filter((r) => r.visits.length === 1);

  describe.concurrent('imaging referrals watch: the changes a live view scrolled off', () => {
    it('are listed below the last frame when the watch ends', async () => {
      const picked = oneVisit().slice(0, 5);
      const shown = await watchOneStep(picked, 120);
      const list = shown.slice(shown.lastIndexOf('Every change seen (5):'));
      for (const r of picked) expect(list).toContain(`${r.reference}  visit 1`);
      expect(list.match(/ready_to_book \u2192 contacted_for_booking/g)).toHaveLength(5);
    });
  });

  describe.concurrent('imaging referrals watch: a change line at 80 columns', () => {
    it('nothing is left out and statuses are not cut: the visit number shortens, then the statuses get a line', async () => {
      // One visit, ready_to_book on the first read and contacted_for_booking after: with its time,
      // reference, "visit 1 MRI" and both statuses, the line is over 80 columns.
      const base = oneVisit()[0]!;
      // Both references at once, each against a server of its own.
      const one = async (reference: string) => {
        const shown = await watchOneStep(
          [{ ...base, reference, visits: [{ ...base.visits[0]!, modality: 'MRI' }] }],
          80,
        );
        for (const l of shown.split('\n')) expect(l.length, l).toBeLessThanOrEqual(80);
        // Time (23) and reference, "visit 1 MRI" and the statuses are 85 columns: as "v1", 80; a long
        // reference puts the change on a line of its own, under the whole head.
        expect(shown).toContain(
          reference === 'R-240004'
            ? 'UTC  R-240004  v1 MRI  ready_to_book \u2192 contacted_for_booking\n'
            : `UTC  ${reference}  visit 1 MRI\n  ready_to_book \u2192 contacted_for_booking\n`,
        );
        expect(shown).not.toContain('contacted_for_…');
      };
      await Promise.all(['R-240004', 'R-240004-WORKERS-COMP-CLAIM-2026-LONG'].map(one));
    });
  });

  describe.concurrent('imaging referrals watch: stopped and on a terminal', () => {
    const launch = launcher();

    it('Ctrl-C (a real SIGINT) prints the last state and exits 130', async () => {
      await ownEmulator(async (m, polls) => {
        const [waiting] = standingAs('waiting');
        const { child, done } = launch(['referrals', 'watch', waiting!.id, '--interval', '1s'], {
          ...m.env(),
          NO_COLOR: '1',
          IMAGING_KEYCHAIN: 'off',
        });
        for (let i = 0; i < 500 && polls(waiting!.id) < 1; i++) await new Promise((r) => setTimeout(r, 10));
        child.kill('SIGINT');
        const result = await done;
        expect(result.code).toBe(130);
        expect(result.stdout).toMatch(new RegExp(`^${waiting!.reference} +waiting +`, 'm'));
        expect(result.stderr).toContain('interrupted');
      });
    });
  });
});

describe.concurrent('imaging referrals watch on the shared emulator', () => {
  beforeEach(() => fx.reset());

  describe.sequential('imaging referrals watch: the outcome', () => {
    it('a referral that is done already: its last state, exit 0, one request', async () => {
      const [done] = standingAs('done');
      const r = await piped(['referrals', 'watch', done!.id], { env: fx.env() });
      expect(r.code).toBe(0);
      expect(lines(r.stdout)[0]).toMatch(/^REFERENCE +STATE +VISITS/);
      expect(r.stdout).toMatch(new RegExp(`^${done!.reference} +done +`, 'm'));
      expect(r.stderr).toContain(`done: ${done!.reference} reached report_uploaded`);
      expect(fx.apiRequests()).toHaveLength(1);
    });

    it('not done when --within passes: exit 9, naming what is awaited', async () => {
      const [waiting] = standingAs('waiting');
      const r = await piped(['referrals', 'watch', waiting!.id, '--within', '0s'], { env: fx.env() });
      expect(r.code).toBe(9);
      expect(r.stderr).toContain(`not yet: ${waiting!.reference} has not reached report_uploaded within 0s`);
      expect(r.stdout).toMatch(new RegExp(`^${waiting!.reference} +waiting +`, 'm'));
    });

    it('a visit stopped at exam_not_completed or all canceled: exit 10, even beside a done one', async () => {
      const cannot = standingAs('cannot');
      expect(cannot.some((r) => r.visits.some((v) => v.status === 'exam_not_completed'))).toBe(true);
      const [done] = standingAs('done');
      const r = await piped(['referrals', 'watch', cannot[0]!.id, done!.id], { env: fx.env() });
      expect(r.code).toBe(10);
      expect(r.stderr).toContain(`cannot happen: ${cannot[0]!.reference} cannot reach report_uploaded`);
    });

    it('exit 10 says which side exit each referral took: every visit canceled, or a visit at exam_not_completed', async () => {
      const allCanceled = (x: Referral) => x.visits.every((v) => v.status === 'canceled');
      const gone = standingAs('cannot').find(allCanceled)!;
      const stoppedAt = standingAs('cannot').find((x) => !allCanceled(x))!;
      expect(gone && stoppedAt).toBeTruthy();
      const one = await piped(['referrals', 'watch', stoppedAt.id], { env: fx.env() });
      expect(one.code).toBe(10);
      expect(one.stderr).toContain(
        `cannot happen: ${stoppedAt.reference} cannot reach report_uploaded (a visit stopped at exam_not_completed)\n`,
      );
      const both = await piped(['referrals', 'watch', gone.id, stoppedAt.id], { env: fx.env() });
      expect(both.code).toBe(10);
      expect(both.stderr).toContain(
        `cannot happen: ${gone.reference} cannot reach report_uploaded (every visit canceled); ${stoppedAt.reference} cannot reach report_uploaded (a visit stopped at exam_not_completed)\n`,
      );
    });

    it('--until takes several statuses in any case; a visit at exam_not_completed has reached booked', async () => {
      const enc = fx.mock.referrals
        .slice(0, 600)
        .find((r) => r.visits.length > 0 && r.visits.every((v) => v.status === 'exam_not_completed'));
      const id = enc?.id ?? standingAs('done')[0]!.id;
      const r = await piped(['referrals', 'watch', id, '--until', 'BOOKED,Report-Uploaded'], {
        env: fx.env(),
      });
      expect(r.code).toBe(0);
    });

    it('refuses --format json and csv, a short interval and a misspelt status, before any request', async () => {
      const id = standingAs('done')[0]!.id;
      for (const format of ['json', 'csv']) {
        const r = await piped(['referrals', 'watch', id, '--format', format], { env: fx.env() });
        expectUsageError(r, new RegExp(`--format ${format} is not available here`), fx.apiRequests().length);
        expect(r.stderr).toContain('Use one of: table, ndjson.');
      }
      expectUsageError(
        await piped(['referrals', 'watch', id, '--json'], { env: fx.env() }),
        /--format json is not available here/,
        fx.apiRequests().length,
      );
      expectUsageError(
        await piped(['referrals', 'watch', id, '--interval', '5s'], {
          env: fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-token' }),
        }),
        /--interval: 5s is too short \(at least 10s\)/,
        fx.apiRequests().length,
      );
      expectUsageError(
        await piped(['referrals', 'watch', id, '--interval', '500ms'], { env: fx.env() }),
        /--interval: 500ms is too short \(at least /,
        fx.apiRequests().length,
      );
      expectUsageError(
        await piped(['referrals', 'watch', id, '--until', 'reprot_uploaded'], { env: fx.env() }),
        /did you mean "report_uploaded"\?/,
        fx.apiRequests().length,
      );
    });
  });

  describe.sequential('imaging referrals watch: the sandbox allowance', () => {
    let n = 0;
    const sandbox = () =>
      fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: `mock-watch-${process.pid}-${++n}` });

    it('shows the requests an hour, and refuses a watch that would use up the allowance (exit 6, --yes goes on)', async () => {
      const ids = standingAs('done')
        .slice(0, 3)
        .map((r) => r.id);
      const env = sandbox();
      const r = await piped(['referrals', 'watch', ...ids, '--interval', '10s'], { env });
      expect(r.code).toBe(6);
      expect(r.stderr).toMatch(
        /^This watch sends about 1,080 requests an hour \(one per referral every 10s\), at most 25,923 requests in a day; about [\d,]+ are left in the sandbox allowance/m,
      );
      expect(r.stderr).toMatch(/error: this watch would use up the sandbox allowance within a day/);
      expect(fx.apiRequests()).toHaveLength(0);
      const within = await piped(['referrals', 'watch', ...ids, '--interval', '10s', '--within', '1h'], {
        env,
      });
      expect(within.code).toBe(0);
      expect(within.stderr).toContain('at most 1,083 requests within 1h;');
      const yes = await piped(['referrals', 'watch', ...ids, '--interval', '10s', '--yes'], { env });
      expect(yes.code).toBe(0);
      expect(yes.stderr).toContain('going ahead (--yes)');
    });
  });

  describe.sequential('imaging referrals watch: what a person sees', () => {
    const OWN = /\r?\u001b\[(?:\d+A|K|J|[0-9;]*m)/g;

    it('the table fits 80 and 200 columns on a terminal, with no escape but its own', async () => {
      const ids = [...standingAs('waiting').slice(0, 3), ...standingAs('cannot').slice(0, 2)].map(
        (r) => r.id,
      );
      for (const columns of [80, 200]) {
        const r = await run(['referrals', 'watch', ...ids, '--within', '0s'], {
          env: fx.env(),
          stdoutIsTTY: true,
          stderrIsTTY: true,
          columns,
        });
        expect(r.code).toBe(10);
        const text = r.stdout.replace(OWN, '');
        expect(text).not.toContain('\u001b');
        for (const line of lines(text)) expect([...line].length).toBeLessThanOrEqual(columns);
        expect(text).toMatch(/^REFERENCE +STATE +VISITS/m);
        // At 200 columns every column is there, the id too.
        if (columns === 200) expect(text).toContain(ids[0]!);
      }
    });

    it("a hostile server's text reaches the terminal and the pipe only through the sanitiser", async () => {
      // Every string of the referral carries the emulator's hostile text, but for its id: an answer
      // with another id than the one asked for is refused, never shown.
      const referral = standingAs('waiting')[0]!;
      const hostile = (v: unknown, key?: string): unknown =>
        typeof v === 'string'
          ? key === 'id' && v === referral.id
            ? v
            : v + HOSTILE
          : Array.isArray(v)
            ? v.map((x) => hostile(x))
            : typeof v === 'object' && v !== null
              ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hostile(x, k)]))
              : v;
      const h = await testServer((_req, res) => json(res, 200, hostile(referral)));
      const config = tempDir();
      try {
        const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: h.url, IMAGING_CONFIG_DIR: config.path };
        const args = ['referrals', 'watch', referral.id, '--within', '0s'];
        const tty = await run(args, { env, stdoutIsTTY: true, stderrIsTTY: true, columns: 80 });
        expect(tty.code, tty.stderr).toBe(9);
        expect(tty.stdout.replace(OWN, '')).not.toMatch(/[\u001b\u009b\u202e\u0007]/);
        const p = await piped(args, { env });
        expect(p.code).toBe(9);
        expect(p.stdout + p.stderr).not.toMatch(/[\u001b\u009b\u202e\u0007]/);
        expect(p.stdout).toContain('<U+202E>');
      } finally {
        await h.close();
        config.cleanup();
      }
    });
  });

  describe.sequential('imaging referrals watch: waits longer than a Node timer holds', () => {
    it('--interval over 24h is a usage error before any request (a 25d one would poll every 1 ms)', async () => {
      const id = standingAs('waiting')[0]!.id;
      for (const interval of ['25d', '30d', '25h']) {
        const r = await piped(['referrals', 'watch', id, '--interval', interval, '--within', '25d'], {
          env: fx.env(),
        });
        // As typed: 25h, not 1d 1h.
        expectUsageError(r, new RegExp(`--interval: ${interval} is too long \\(at most 24h\\)`), 0);
        expect(fx.apiRequests()).toHaveLength(0);
      }
    });

    it('a 429 whose Retry-After asks for days ends the watch (exit 6, naming when), never a tight loop', async () => {
      // As a server in trouble may answer: 429 with Retry-After 3000000 (34 days, beyond a Node timer).
      const server = await testServer((_req, res) =>
        json(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': '3000000' }),
      );
      const config = tempDir();
      try {
        const id = standingAs('waiting')[0]!.id;
        const t0 = Date.now();
        const r = await piped(['referrals', 'watch', id, '--interval', '1s', '--within', '4s'], {
          env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: config.path },
        });
        expect(r.code).toBe(6);
        expect(Date.now() - t0).toBeLessThan(3000);
        // The client does not wait for a Retry-After over 60 s: one request, no loop.
        expect(server.seen).toHaveLength(1);
        expect(r.stderr).toMatch(/^error: slow down$/m);
        expect(r.stderr).toMatch(
          /asks for a pause of 35 days: try again after that \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)/,
        );
        expect(r.stderr).not.toContain('TimeoutOverflowWarning');
      } finally {
        await server.close();
        config.cleanup();
      }
    });
  });
});
