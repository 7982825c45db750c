import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../../src/api/types.js';
import { minimalPdf, placementOf } from '../../../src/emulator/data/documents.js';
import { bothForms, expectUsageError, hasEscapes, onTerminal, piped, widest } from '../../fake-io.js';
import { BIN, json, mockFixture, mountTmpfs, tempDir, testServer, until } from '../../helpers.js';
import { paneFixture } from '../../terminal.js';

const fx = mockFixture();
const dir = tempDir('imaging-download-');
beforeAll(() => fx.start());
afterAll(async () => {
  await fx.stop();
  dir.cleanup();
});

const all = (): Referral[] => fx.mock.referrals.slice(0, fx.mock.referrals.total);
const links = (r: Referral) =>
  r.visits.flatMap((v) => v.procedures.map((p) => p.report_link)).filter(Boolean);
const placed = (p: ReturnType<typeof placementOf>) =>
  all().find((r) => placementOf(r.id) === p && links(r).length > 0)!;
const files = () => readdirSync(dir.path).sort();

let pdftotext: boolean;
try {
  execFileSync('pdftotext', ['-v'], { stdio: 'pipe' });
  pdftotext = true;
} catch {
  pdftotext = false;
}

/** A scratch folder for one test (its config and its downloads), removed however the test ends. */
async function inDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const d = tempDir();
  try {
    await fn(d.path);
  } finally {
    d.cleanup();
  }
}

// The slow server's tests wait on its answers: they run beside the others (each with a server of its
// own), which share `fx` and `dir` and run one at a time.
describe.concurrent('many referrals from a slow server', () => {
  const N = 24;
  const ids = Array.from({ length: N }, (_, i) => `0b7e1f7a-5a0e-4f43-9a4c-${String(i).padStart(12, '0')}`);
  /** A server whose every answer is slow; it counts the requests of each kind it holds at once. */
  async function slowServer() {
    const now = { referrals: 0, files: 0 };
    const most = { referrals: 0, files: 0 };
    const api: Awaited<ReturnType<typeof testServer>> = await testServer((req, res) => {
      const m = /^\/api\/v2\/referrals\/([^/?]+)$/.exec(req.url ?? '');
      const kind = m ? 'referrals' : 'files';
      now[kind]++;
      most[kind] = Math.max(most[kind], now[kind]);
      // Each answer is slow: the requests of a run overlap only as far as the tool lets them.
      setTimeout(() => {
        now[kind]--;
        if (m)
          return json(res, 200, {
            id: m[1],
            reference: `R-${m[1]!.slice(-4)}`,
            documents: [],
            visits: [
              {
                status: 'report_uploaded',
                procedures: [{ accession_id: 'A', report_link: `${api.url}/api/v2/files/${m[1]}.pdf` }],
              },
            ],
          });
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end(minimalPdf(['report']));
      }, 100);
    });
    return { api, most };
  }
  const envIn = (url: string, d: string) => ({
    IMAGING_ENV: 'local',
    IMAGING_BASE_URL: url,
    IMAGING_CONFIG_DIR: d,
  });

  it('--concurrency N: N referrals read and N files fetched at once, never more', async () => {
    const { api, most } = await slowServer();
    const d = tempDir();
    try {
      writeFileSync(join(d.path, 'list.txt'), `${ids.join('\n')}\n`);
      const out = join(d.path, 'out');
      const r = await piped(
        ['referrals', 'download', '--from', join(d.path, 'list.txt'), '-D', out, '--concurrency', '3'],
        { env: envIn(api.url, d.path) },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(readdirSync(out)).toHaveLength(N);
      expect(most).toEqual({ referrals: 3, files: 3 });
      // In the order asked, whichever arrived first.
      expect(r.stdout.match(/saved (R-\d+)_A/g)).toEqual(ids.map((id) => `saved R-${id.slice(-4)}_A`));
      const wide = await piped(
        ['referrals', 'download', ...ids, '-D', out, '--force', '--concurrency', '17'],
        {
          env: envIn(api.url, d.path),
        },
      );
      expect(wide.code).toBe(2);
    } finally {
      d.cleanup();
      await api.close();
    }
  });

  it('on a terminal: a bar from the start, reading then downloading, with a rate and an ETA', async () => {
    const { api, most } = await slowServer();
    const d = tempDir();
    try {
      const t = await onTerminal(['referrals', 'download', ...ids, '-D', join(d.path, 'out')], {
        env: envIn(api.url, d.path),
      });
      expect(t.code, t.stderr).toBe(0);
      expect(most).toEqual({ referrals: 4, files: 4 });
      const frames = t.stderr.split('\r\u001b[2K');
      const reading = frames.findIndex((f) => /^reading .*0\/24 referrals/.test(f));
      const downloading = frames.findIndex((f) => /^downloading .*\/24 files/.test(f));
      expect(reading).toBeGreaterThanOrEqual(0);
      expect(downloading).toBeGreaterThan(reading);
      // A real rate and ETA while under way, not "0/s  ETA 0s".
      expect(frames.some((f) => /^reading .* [1-9]\d*\/s {2}ETA [1-9]/.test(f))).toBe(true);
      expect(frames.some((f) => /^downloading .* [1-9][\d,]*\/s {2}ETA [1-9]/.test(f))).toBe(true);
      expect(t.stderr.endsWith('\r\u001b[2K\u001b[?25h')).toBe(true);
    } finally {
      d.cleanup();
      await api.close();
    }
  });
});

describe.concurrent('imaging referrals download against the shared emulator', () => {
  beforeEach(() => {
    fx.reset();
    fx.mock.storage.requests.length = 0;
    for (const f of readdirSync(dir.path)) rmSync(join(dir.path, f), { recursive: true, force: true });
  });

  describe.sequential('imaging referrals download', () => {
    it('saves each report PDF, 0600, named <reference>_<accession>_report.pdf; a report not in yet is listed', async () => {
      const r = placed('api');
      const { terminal, piped: p } = await bothForms(
        ['referrals', 'download', r.id, '-D', dir.path, '--force'],
        {
          env: fx.env(),
        },
      );
      expect(p.code).toBe(0);
      expect(terminal.code).toBe(0);
      const accessions = r.visits
        .flatMap((v) => v.procedures)
        .filter((x) => x.report_link)
        .map((x) => `${r.reference}_${x.accession_id}_report.pdf`);
      expect(files()).toEqual([...accessions].sort());
      for (const name of accessions) {
        const path = join(dir.path, name);
        expect(statSync(path).mode & 0o777).toBe(0o600);
        expect(readFileSync(path).subarray(0, 5).toString()).toBe('%PDF-');
        expect(p.stdout).toContain(`saved ${name} (`);
      }
      const pending = r.visits.filter((v) => !links({ ...r, visits: [v] }).length);
      for (const v of pending)
        expect(p.stdout).toMatch(
          new RegExp(
            `: (not available yet \\(${v.status}\\)|no report, visit canceled|no report, exam not completed)\n`,
          ),
        );
      // Piped: lines, no escapes, nothing on stderr; on a terminal, a progress bar cleared after.
      expect(hasEscapes(p.stdout + p.stderr)).toBe(false);
      expect(p.stderr).toBe('');
      expect(terminal.stderr).toContain('\u001b[?25h');
      expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    });

    it.skipIf(!pdftotext)(
      `the reports are real PDFs: pdftotext reads the accession${pdftotext ? '' : ' (skipped: pdftotext is not installed)'}`,
      async () => {
        const r = placed('api');
        expect((await piped(['referrals', 'download', r.id, '-D', dir.path], { env: fx.env() })).code).toBe(
          0,
        );
        const accession = r.visits.flatMap((v) => v.procedures).find((x) => x.report_link)!.accession_id!;
        const text = execFileSync('pdftotext', [
          join(dir.path, `${r.reference}_${accession}_report.pdf`),
          '-',
        ]);
        expect(text.toString()).toContain(`Accession: ${accession}`);
      },
    );

    it('storage links (direct, and by a redirect from the API) are fetched without the token', async () => {
      for (const p of ['storage', 'api-redirect'] as const) {
        const r = placed(p);
        const res = await piped(['referrals', 'download', r.id, '-D', dir.path, '--force'], {
          env: fx.env(),
        });
        expect(res.code).toBe(0);
        expect(files().filter((f) => f.startsWith(`${r.reference}_`))).toHaveLength(links(r).length);
      }
      expect(fx.mock.storage.requests.length).toBeGreaterThan(1);
      expect(fx.mock.storage.requests.every((q) => !q.authorization && q.status === 200)).toBe(true);
    });

    it('an expired link answers an HTML page: not saved, one line each, exit 1 with the count', async () => {
      const r = placed('storage-expired');
      const res = await piped(['referrals', 'download', r.id, '-D', dir.path], { env: fx.env() });
      expect(res.code).toBe(1);
      expect(files()).toEqual([]);
      const n = links(r).length;
      expect(res.stderr.match(/the link answered an HTML page \(an expired link/g)).toHaveLength(n);
      expect(res.stderr).toMatch(new RegExp(`error: ${n} files? not saved \\(0 saved\\)\\n$`));
      expect(res.stderr).not.toMatch(/signature=|expires=/);
    });

    it('an existing file is skipped (exit 1) and replaced with --force', async () => {
      const r = placed('api');
      const name = `${r.reference}_${r.visits.flatMap((v) => v.procedures).find((x) => x.report_link)!.accession_id}_report.pdf`;
      writeFileSync(join(dir.path, name), 'mine\n');
      const res = await piped(['referrals', 'download', r.id, '-D', dir.path], { env: fx.env() });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`exists: ${name} (use --force)\n`);
      expect(readFileSync(join(dir.path, name), 'utf8')).toBe('mine\n');
      const forced = await piped(['referrals', 'download', r.id, '-D', dir.path, '--force'], {
        env: fx.env(),
      });
      expect(forced.code).toBe(0);
      expect(readFileSync(join(dir.path, name)).subarray(0, 5).toString()).toBe('%PDF-');
    });

    it('nothing available is exit 4, with the visits listed; --json lists every item with its status', async () => {
      const none = all().find((r) => r.visits.length > 0 && links(r).length === 0 && !r.documents.length)!;
      const res = await piped(['referrals', 'download', none.id, '-D', dir.path, '--documents'], {
        env: fx.env(),
      });
      expect(res.code).toBe(4);
      expect(res.stderr).toMatch(/nothing to download: no document with a URL for 1 referral/);
      const reports = await piped(['referrals', 'download', none.id, '-D', dir.path], { env: fx.env() });
      expect(reports.code).toBe(4);
      expect(reports.stdout).toContain(`${none.reference} `);
      // The watch it suggests names the referral, by its reference.
      expect(reports.stderr).toContain(
        `hint: Wait until the visit reaches report_uploaded: imaging referrals watch ${none.reference}\n`,
      );
      const r = placed('api');
      const j = await piped(['referrals', 'download', r.id, '-D', dir.path, '--json'], { env: fx.env() });
      expect(j.code).toBe(0);
      const items = JSON.parse(j.stdout) as Array<Record<string, unknown>>;
      const saved = items.filter((i) => i.status === 'saved');
      expect(saved).toHaveLength(links(r).length);
      expect(saved[0]).toMatchObject({ referral_id: r.id, reference: r.reference, kind: 'report' });
      expect(items.filter((i) => i.status === 'not_available')).toHaveLength(
        r.visits.flatMap((v) => v.procedures).length - links(r).length,
      );
      expect(j.stdout).not.toContain('http');
      // Run again: every file exists; each is listed as such (exit 1), none is an empty list.
      const again = await piped(['referrals', 'download', r.id, '-D', dir.path, '--json'], { env: fx.env() });
      expect(again.code).toBe(1);
      const second = JSON.parse(again.stdout) as Array<Record<string, unknown>>;
      expect(second.filter((i) => i.status === 'exists')).toHaveLength(links(r).length);
      expect(second.find((i) => i.status === 'exists')).toMatchObject({
        referral_id: r.id,
        kind: 'report',
        reason: expect.stringMatching(/^exists: .*_report\.pdf \(use --force\)$/),
      });
      // ndjson: the same items, one a line.
      const nd = await piped(['referrals', 'download', r.id, '-D', dir.path, '--format', 'ndjson'], {
        env: fx.env(),
      });
      expect(
        nd.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).status),
      ).toEqual(second.map((i) => i.status));
      // Nothing available: the items still listed, with why.
      const n = await piped(['referrals', 'download', none.id, '-D', dir.path, '--json'], { env: fx.env() });
      expect(n.code).toBe(4);
      const listed = JSON.parse(n.stdout) as Array<Record<string, unknown>>;
      expect(listed.length).toBeGreaterThan(0);
      expect(listed.every((i) => i.status === 'not_available' && typeof i.reason === 'string')).toBe(true);
    });

    it('--json status,file and --fields status,file pick the fields of each item: JSON, NDJSON and a table', async () => {
      const r = placed('api');
      const procs = r.visits.flatMap((v) => v.procedures).length;
      const j = await piped(['referrals', 'download', r.reference, '-D', dir.path, '--json', 'status,file'], {
        env: fx.env(),
      });
      expect(j.code, j.stderr).toBe(0);
      const items = JSON.parse(j.stdout) as Array<Record<string, unknown>>;
      expect(items).toHaveLength(procs);
      for (const i of items) expect(Object.keys(i)).toEqual(['status', 'file']);
      expect(items.filter((i) => i.status === 'saved').map((i) => i.file)).toEqual(
        r.visits
          .flatMap((v) => v.procedures)
          .filter((x) => x.report_link)
          .map((x) => `${r.reference}_${x.accession_id}_report.pdf`),
      );
      const nd = await piped(
        [
          'referrals',
          'download',
          r.reference,
          '-D',
          dir.path,
          '--format',
          'ndjson',
          '--fields',
          'status',
          '--force',
        ],
        { env: fx.env() },
      );
      expect(nd.code, nd.stderr).toBe(0);
      expect(
        nd.stdout
          .trim()
          .split('\n')
          .map((l) => Object.keys(JSON.parse(l))),
      ).toEqual(items.map(() => ['status']));
      const t = await piped(
        ['referrals', 'download', r.reference, '-D', dir.path, '--fields', 'status,file', '--force'],
        {
          env: fx.env(),
        },
      );
      expect(t.code, t.stderr).toBe(0);
      const rows = t.stdout.trim().split('\n');
      expect(rows[0]).toMatch(/^STATUS +FILE$/);
      expect(rows).toHaveLength(procs + 1);
      expect(rows.filter((l) => l.startsWith('saved '))).toHaveLength(links(r).length);
    });

    it('several referrals: one not found is a line and a failure, the others are saved', async () => {
      const a = placed('api');
      const b = placed('storage');
      const missing = '00000000-0000-4000-8000-000000000000';
      const res = await piped(['referrals', 'download', a.id, missing, b.id, '-D', dir.path], {
        env: fx.env(),
      });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`error: ${missing}: referral not found\n`);
      expect(files()).toHaveLength(links(a).length + links(b).length);
    });

    it('several references, one unknown: one line and a failure, the others saved (exit 1); all unknown: exit 4', async () => {
      const a = placed('api');
      const b = placed('storage');
      const res = await piped(
        ['referrals', 'download', a.reference, 'R-999999', b.reference, '-D', dir.path],
        {
          env: fx.env(),
        },
      );
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('error: R-999999: referral not found\n');
      expect(files()).toHaveLength(links(a).length + links(b).length);
      // The last line says what failed: a referral, not a file.
      expect(res.stderr).toMatch(
        new RegExp(
          `\\nerror: 1 referral not found \\(${links(a).length + links(b).length} files saved\\)\\n$`,
        ),
      );
      const j = await piped(
        ['referrals', 'download', a.reference, 'R-999999', '-D', dir.path, '--json', '--force'],
        { env: fx.env() },
      );
      expect(j.code).toBe(1);
      expect(JSON.parse(j.stdout)).toContainEqual({
        referral: 'R-999999',
        status: 'not_found',
        reason: 'referral not found',
      });
      const none = await piped(['referrals', 'download', 'R-999998', 'R-999999', '-D', dir.path], {
        env: fx.env(),
      });
      expect(none.code).toBe(4);
      expect(none.stderr).toMatch(/nothing to download: 2 referrals not found\n/);
    });

    it('takes a reference as well as an id', async () => {
      const r = placed('api');
      const res = await piped(['referrals', 'download', r.reference.toLowerCase(), '-D', dir.path], {
        env: fx.env(),
      });
      expect(res.code).toBe(0);
      expect(files()).toHaveLength(links(r).length);
    });

    it('--from reads an export (CSV) or one id or reference a line, - for stdin', async () => {
      const a = placed('api');
      const b = placed('storage');
      writeFileSync(
        join(dir.path, 'list.csv'),
        `referral_id,reference\n${a.id},${a.reference}\n${b.id},${b.reference}\n`,
      );
      const res = await piped(
        ['referrals', 'download', '--from', join(dir.path, 'list.csv'), '-D', join(dir.path, 'out')],
        {
          env: fx.env(),
        },
      );
      expect(res.code).toBe(0);
      expect(readdirSync(join(dir.path, 'out'))).toHaveLength(links(a).length + links(b).length);
      const stdin = await piped(
        ['referrals', 'download', '--from', '-', '-D', join(dir.path, 'in'), '--json'],
        {
          env: fx.env(),
          stdin: `${a.reference}\n`,
        },
      );
      expect(stdin.code).toBe(0);
      const items = JSON.parse(stdin.stdout) as Array<{ status: string }>;
      expect(items.filter((i) => i.status === 'saved')).toHaveLength(links(a).length);
    });

    it('a visit advanced to report_uploaded gets its report link, and the report downloads', async () => {
      const r = all().find(
        (x) => placementOf(x.id) === 'api' && x.visits.length === 1 && x.visits[0]!.status === 'booked',
      )!;
      const before = await piped(['referrals', 'download', r.id, '-D', dir.path], { env: fx.env() });
      expect(before.code).toBe(4);
      expect(before.stdout).toContain(': not available yet (booked)\n');
      const res = await fetch(`${fx.mock.url}/__mock/referrals/${r.id}/visits/${r.visits[0]!.id}/advance`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'report_uploaded' }),
      });
      expect(res.status).toBe(200);
      const after = await piped(['referrals', 'download', r.id, '-D', dir.path], { env: fx.env() });
      expect(after.code).toBe(0);
      expect(files()).toHaveLength(r.visits[0]!.procedures.length);
    });

    it('documents with a URL: <reference>_document-<n>.<ext>', async () => {
      const r = all().find((x) => placementOf(x.id) === 'api' && x.documents.length > 0)!;
      const res = await piped(['referrals', 'download', r.id, '-D', dir.path, '--documents'], {
        env: fx.env(),
      });
      expect(res.code).toBe(0);
      expect(files()).toEqual([`${r.reference}_document-1.pdf`]);
      // Again: the file is there, so the link is not even asked for.
      fx.reset();
      const again = await piped(['referrals', 'download', r.id, '-D', dir.path, '--documents'], {
        env: fx.env(),
      });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`exists: ${r.reference}_document-1.pdf (use --force)\n`);
      expect(fx.apiRequests().filter((q) => q.path.includes('/documents/'))).toEqual([]);
    });

    it('--verbose shows neither a signed query string nor the token', async () => {
      const r = placed('storage');
      const res = await piped(['referrals', 'download', r.id, '-D', dir.path, '--verbose'], {
        env: fx.env(),
      });
      expect(res.code).toBe(0);
      expect(res.stderr).toContain(`${fx.mock.storage.url}/files/${r.id}/reports/`);
      expect(res.stderr).toContain('?[redacted]');
      expect(res.stderr).not.toMatch(/signature|expires=|mock-token/);
    });

    it('--max-size: a larger file is not saved', async () => {
      const r = placed('api');
      const res = await piped(['referrals', 'download', r.id, '-D', dir.path, '--max-size', '100B'], {
        env: fx.env(),
      });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('larger than --max-size (100 bytes); not saved');
      expect(files()).toEqual([]);
    });

    it('a folder that cannot be made (under /proc) is one error, exit 1, never a hang', async () => {
      // Node's own recursive mkdir loops for ever there: the real binary, stopped if it hangs.
      const child = spawn(
        process.execPath,
        [BIN, 'referrals', 'download', placed('api').id, '-D', '/proc/imaging-nope/a'],
        {
          env: { ...process.env, ...fx.env(), NO_COLOR: '1' },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const hang = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await new Promise((resolve) => child.on('close', (c) => resolve(c)));
      clearTimeout(hang);
      expect(code).toBe(1);
      expect(stderr).toBe('error: --dir: cannot make /proc/imaging-nope: no such folder\n');
    });

    it('usage errors before any request', async () => {
      const env = fx.env();
      expectUsageError(
        await piped(['referrals', 'download'], { env }),
        /name the referrals/,
        fx.apiRequests().length,
      );
      expectUsageError(
        await piped(['referrals', 'download', placed('api').id, '--max-size', 'lots'], { env }),
        /--max-size must be a size such as 20MiB/,
        fx.apiRequests().length,
      );
      writeFileSync(join(dir.path, 'file'), '');
      expectUsageError(
        await piped(['referrals', 'download', placed('api').id, '-D', join(dir.path, 'file')], { env }),
        /--dir: .* is not a folder/,
        fx.apiRequests().length,
      );
      symlinkSync(join(dir.path, 'not-mounted', 'cases'), join(dir.path, 'share'));
      for (const below of ['', 'sub'])
        expectUsageError(
          await piped(['referrals', 'download', placed('api').id, '-D', join(dir.path, 'share', below)], {
            env,
          }),
          /--dir: .*share is a symbolic link to a folder that does not exist/,
          fx.apiRequests().length,
        );
      expectUsageError(
        await piped(['referrals', 'download', placed('api').id, '-o', 'x.pdf'], { env }),
        /unknown option '-o'/,
        fx.apiRequests().length,
      );
    });
  });

  /** An API of our own: one referral whose report links go below the base URL, out of it, and elsewhere. */
  describe.sequential('the token goes only below the base URL', () => {
    const ID = '0b7e1f7a-5a0e-4f43-9a4c-2d1b6f0a9e11';
    const pdf = minimalPdf(['Accession: X']);
    const servers: Array<Awaited<ReturnType<typeof testServer>>> = [];
    afterEach(async () => {
      for (const s of servers.splice(0)) await s.close();
    });

    it('a link that is not an absolute URL fails alone: the other files are saved, exit 1', async () => {
      let base = '';
      const api = await testServer((req, res) => {
        if (req.url === `/api/v2/referrals/${ID}`)
          return json(res, 200, {
            id: ID,
            reference: 'R-1',
            documents: [],
            visits: [
              {
                status: 'report_uploaded',
                procedures: [
                  { accession_id: 'B1', report_link: '/api/v2/files/B1.pdf', procedure: 'MRI' },
                  { accession_id: 'B2', report_link: `${base}/api/v2/files/B2.pdf`, procedure: 'MRI' },
                ],
              },
            ],
          });
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end(pdf);
      });
      base = api.url;
      servers.push(api);
      await inDir(async (d) => {
        const r = await piped(['referrals', 'download', ID, '-D', d], {
          env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: api.url, IMAGING_CONFIG_DIR: d },
        });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain('the link is not an absolute URL; not fetched');
        expect(readdirSync(d).filter((f) => f.endsWith('.pdf'))).toEqual(['R-1_B2_report.pdf']);
      });
    });

    it('sends Authorization to the base URL only: never to another origin, a path outside /api/v2, or after a redirect out', async () => {
      const other = await testServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end(pdf);
      });
      let base = '';
      const api = await testServer((req, res) => {
        const path = req.url ?? '';
        if (path === `/api/v2/referrals/${ID}`) {
          const proc = (acc: string, link: string) => ({
            accession_id: acc,
            report_link: link,
            procedure: 'MRI',
          });
          return json(res, 200, {
            id: ID,
            reference: 'R-1',
            documents: [],
            visits: [
              {
                status: 'report_uploaded',
                procedures: [
                  proc('A1', `${base}/api/v2/files/A1.pdf`),
                  proc('A2', `${base}/api/v2/files/A2.pdf`),
                  proc('A3', `${other.url}/bucket/A3.pdf?signature=s3cr3t`),
                  proc('A4', `${base}/outside/A4.pdf`),
                  // Below /api/v2 as written; a front end that decodes %2F routes it to /api/files.
                  proc('A5', `${base}/api/v2/..%2Ffiles/A5.pdf`),
                  // The same host on another port, a path under /api/v2: another origin all the same.
                  proc('A6', `${other.url}/api/v2/files/A6.pdf`),
                ],
              },
            ],
          });
        }
        // A 503 first: tried again, as an API request would be.
        if (path === '/api/v2/files/A1.pdf' && api.seen.filter((s) => s.url === path).length === 1) {
          res.writeHead(503);
          return res.end();
        }
        if (path === '/api/v2/files/A2.pdf') {
          res.writeHead(302, { location: `${other.url}/bucket/A2.pdf?signature=s3cr3t` });
          return res.end();
        }
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end(pdf);
      });
      base = api.url;
      servers.push(other, api);
      await inDir(async (d) => {
        const r = await piped(['referrals', 'download', ID, '-D', d, '--verbose'], {
          env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: api.url, IMAGING_CONFIG_DIR: d },
        });
        expect(r.code).toBe(0);
        expect(
          readdirSync(d)
            .filter((f) => f.endsWith('.pdf'))
            .sort(),
        ).toEqual(['A1', 'A2', 'A3', 'A4', 'A5', 'A6'].map((a) => `R-1_${a}_report.pdf`));
        const auth = (path: string) => api.seen.find((s) => s.url === path)?.headers.authorization;
        expect(auth(`/api/v2/referrals/${ID}`)).toBe('Bearer mock-token');
        expect(api.seen.filter((s) => s.url === '/api/v2/files/A1.pdf')).toHaveLength(2);
        expect(auth('/api/v2/files/A1.pdf')).toBe('Bearer mock-token');
        expect(auth('/api/v2/files/A2.pdf')).toBe('Bearer mock-token');
        expect(api.seen.find((s) => s.url === '/outside/A4.pdf')!.headers.authorization).toBeUndefined();
        expect(
          api.seen.find((s) => s.url === '/api/v2/..%2Ffiles/A5.pdf')!.headers.authorization,
        ).toBeUndefined();
        expect(other.seen.map((s) => s.url).sort()).toEqual([
          '/api/v2/files/A6.pdf',
          '/bucket/A2.pdf?signature=s3cr3t',
          '/bucket/A3.pdf?signature=s3cr3t',
        ]);
        expect(other.seen.every((s) => s.headers.authorization === undefined)).toBe(true);
        expect(r.stderr).not.toMatch(/s3cr3t|mock-token/);
      });
    });

    it('a same-origin link whose path a server may resolve elsewhere is fetched without the token', async () => {
      // Twice-encoded, ;-parameter, trailing-dot, fullwidth and backslash spellings of `..`.
      const tricks = [
        '%252e%252e/%252e%252e/A1.pdf',
        '..%252F..%252FA2.pdf',
        '..%3B/..%3B/A3.pdf',
        '.../A4.pdf',
        '%EF%BC%8E%EF%BC%8E/A5.pdf',
        '..%5cA6.pdf',
      ];
      let base = '';
      const api = await testServer((req, res) => {
        if (req.url === `/api/v2/referrals/${ID}`)
          return json(res, 200, {
            id: ID,
            reference: 'R-1',
            documents: [],
            visits: [
              {
                status: 'report_uploaded',
                procedures: [
                  ...tricks.map((t, i) => ({
                    accession_id: `A${i + 1}`,
                    report_link: `${base}/api/v2/files/${t}`,
                  })),
                  { accession_id: 'OK', report_link: `${base}/api/v2/files/OK.pdf` },
                ],
              },
            ],
          });
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end(pdf);
      });
      base = api.url;
      servers.push(api);
      await inDir(async (d) => {
        const r = await piped(['referrals', 'download', ID, '-D', d], {
          env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: api.url, IMAGING_CONFIG_DIR: d },
        });
        expect(r.code, r.stderr).toBe(0);
        const files = api.seen.filter((s) => s.url.startsWith('/api/v2/files/'));
        expect(files).toHaveLength(tricks.length + 1);
        for (const f of files)
          expect([f.url, f.headers.authorization]).toEqual([
            f.url,
            f.url === '/api/v2/files/OK.pdf' ? 'Bearer mock-token' : undefined,
          ]);
      });
    });

    it('a report link that answers something other than a PDF is not saved as .pdf', async () => {
      const api = await testServer((req, res) => {
        if (req.url === `/api/v2/referrals/${ID}`)
          return json(res, 200, {
            id: ID,
            reference: 'R-1',
            documents: [],
            visits: [
              {
                status: 'sent_to_rp',
                procedures: [{ accession_id: 'B1', report_link: `${api.url}/api/v2/B1` }],
              },
            ],
          });
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end('PK\u0003\u0004 not a pdf');
      });
      servers.push(api);
      await inDir(async (d) => {
        const r = await piped(['referrals', 'download', ID, '-D', d], {
          env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: api.url, IMAGING_CONFIG_DIR: d },
        });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain('error: R-1 B1: the link answered something that is not a PDF');
        expect(readdirSync(d).filter((f) => f.endsWith('.pdf'))).toEqual([]);
      });
    });
  });

  /** An API of our own serving referrals as given, each report a PDF naming its referral. */
  describe.sequential('several referrals from one server', () => {
    const referrals = new Map<string, unknown>();
    let api: Awaited<ReturnType<typeof testServer>>;
    beforeAll(async () => {
      api = await testServer((req, res) => {
        const m = /^\/api\/v2\/referrals\/([^/?]+)$/.exec(req.url ?? '');
        if (m && referrals.has(m[1]!)) return json(res, 200, referrals.get(m[1]!));
        const f = /^\/api\/v2\/files\/([^/?]+)\.pdf$/.exec(req.url ?? '');
        if (f) {
          res.writeHead(200, { 'content-type': 'application/pdf' });
          return res.end(minimalPdf([`Referral: ${f[1]}`]));
        }
        // A document whose link ends in .sh: a PDF when its name says so, else a shell script.
        const doc = /^\/api\/v2\/docs\/([^/?]+)$/.exec(req.url ?? '');
        if (doc?.[1]?.startsWith('pdf')) {
          res.writeHead(200, { 'content-type': 'application/pdf' });
          return res.end(minimalPdf(['a document']));
        }
        if (doc) {
          res.writeHead(200, { 'content-type': 'text/x-shellscript' });
          return res.end('#!/bin/sh\necho owned\n');
        }
        json(res, 404, { message: 'not found' });
      });
    });
    afterAll(() => api.close());
    afterEach(() => referrals.clear());
    const serve = (id: string, reference: string, accession: string) =>
      referrals.set(id, {
        id,
        reference,
        documents: [],
        visits: [
          {
            status: 'report_uploaded',
            procedures: [{ accession_id: accession, report_link: `${api.url}/api/v2/files/${id}.pdf` }],
          },
        ],
      });
    const A = '0b7e1f7a-5a0e-4f43-9a4c-2d1b6f0a9e21';
    const B = '0b7e1f7a-5a0e-4f43-9a4c-2d1b6f0a9e22';
    const C = '0b7e1f7a-5a0e-4f43-9a4c-2d1b6f0a9e23';
    const envIn = (d: string) => ({ IMAGING_ENV: 'local', IMAGING_BASE_URL: api.url, IMAGING_CONFIG_DIR: d });
    const text = (path: string) => readFileSync(path).toString('latin1');

    it('two referrals whose names sanitise alike: both kept, the second under -2, even with --force', async () => {
      serve(A, 'R-1/2', 'ACC');
      serve(B, 'R-1', '2_ACC');
      await inDir(async (d) => {
        const out = join(d, 'out');
        for (const run of [1, 2]) {
          const r = await piped(['referrals', 'download', A, B, '-D', out, '--force', '--max-size', '2GiB'], {
            env: envIn(d),
          });
          expect(r.code, `run ${run}: ${r.stderr}`).toBe(0);
          expect(r.stdout).toContain('saved R-1_2_ACC_report.pdf (');
          expect(r.stdout).toContain('saved R-1_2_ACC_report-2.pdf (');
          expect(readdirSync(out).sort()).toEqual(['R-1_2_ACC_report-2.pdf', 'R-1_2_ACC_report.pdf']);
          // Each file holds its own referral's report.
          expect(text(join(out, 'R-1_2_ACC_report.pdf'))).toContain(`Referral: ${A}`);
          expect(text(join(out, 'R-1_2_ACC_report-2.pdf'))).toContain(`Referral: ${B}`);
        }
      });
    });

    it('names that differ only in case (R-DUP, r-dup): the second gets -2, even with --force', async () => {
      serve(A, 'R-DUP', 'ACC');
      serve(B, 'r-dup', 'acc');
      await inDir(async (d) => {
        const out = join(d, 'out');
        for (const run of [1, 2]) {
          const r = await piped(['referrals', 'download', A, B, '-D', out, '--force'], {
            env: envIn(d),
          });
          expect(r.code, `run ${run}: ${r.stderr}`).toBe(0);
          expect(readdirSync(out).sort()).toEqual(['R-DUP_ACC_report.pdf', 'r-dup_acc_report-2.pdf']);
          expect(text(join(out, 'r-dup_acc_report-2.pdf'))).toContain(`Referral: ${B}`);
        }
      });
    });

    it('a long CJK reference and an accession of emoji: names cut by UTF-8 bytes at whole code points', async () => {
      serve(A, '\u53c2'.repeat(120), 'ACC'); // 360 bytes in UTF-8, 120 UTF-16 units
      serve(B, 'R-2', `x${'\u{1F600}'.repeat(60)}`); // a cut at 100 UTF-16 units splits a surrogate pair
      await inDir(async (d) => {
        const out = join(d, 'out');
        const r = await piped(['referrals', 'download', A, B, '-D', out], { env: envIn(d) });
        expect(r.code, r.stderr).toBe(0);
        const names = readdirSync(out);
        expect(names).toHaveLength(2);
        for (const name of names) {
          expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
          expect(name).not.toContain('\uFFFD');
          expect(name).not.toMatch(/\p{Cs}/u);
        }
        expect(names).toContain(`${'\u53c2'.repeat(33)}_ACC_report.pdf`);
        expect(names).toContain(`R-2_x${'\u{1F600}'.repeat(24)}_report.pdf`);
      });
    });

    it("a document's extension from its link only when it is a document's (.sh: the content type's, else .bin)", async () => {
      referrals.set(A, {
        id: A,
        reference: 'R-1',
        visits: [],
        documents: [{ url: `${api.url}/api/v2/docs/pdf-run.sh` }, { url: `${api.url}/api/v2/docs/evil.sh` }],
      });
      await inDir(async (d) => {
        const out = join(d, 'out');
        const r = await piped(['referrals', 'download', A, '--documents', '-D', out], { env: envIn(d) });
        expect(r.code, r.stderr).toBe(0);
        expect(readdirSync(out).sort()).toEqual(['R-1_document-1.pdf', 'R-1_document-2.bin']);
      });
    });

    it('a document whose link is under another key (download_url, href) is fetched, as documents shows it', async () => {
      referrals.set(A, {
        id: A,
        reference: 'R-1',
        visits: [],
        documents: [
          { type: 'invoice', download_url: `${api.url}/api/v2/docs/pdf-invoice.pdf` },
          { type: 'aob', href: `${api.url}/api/v2/docs/pdf-aob.pdf` },
          { type: 'note', pages: 2 },
        ],
      });
      await inDir(async (d) => {
        const out = join(d, 'out');
        const r = await piped(['referrals', 'download', A, '--documents', '-D', out], { env: envIn(d) });
        expect(r.code, r.stderr).toBe(0);
        expect(readdirSync(out).sort()).toEqual(['R-1_document-1.pdf', 'R-1_document-2.pdf']);
      });
    });

    it('--json: a link that fails is listed as failed with its reason, and no URL', async () => {
      serve(A, 'R-1', 'A1');
      referrals.set(B, {
        id: B,
        reference: 'R-2',
        documents: [],
        visits: [
          {
            status: 'report_uploaded',
            procedures: [
              { accession_id: 'B1', report_link: `${api.url}/api/v2/gone/B1.pdf?signature=s3cret` },
            ],
          },
        ],
      });
      await inDir(async (d) => {
        const r = await piped(['referrals', 'download', A, B, '-D', join(d, 'out'), '--json'], {
          env: envIn(d),
        });
        expect(r.code).toBe(1);
        const items = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
        expect(items.map((i) => i.status)).toEqual(['saved', 'failed']);
        expect(items[1]).toMatchObject({
          referral_id: B,
          accession: 'B1',
          reason: 'HTTP 404 from the link; not saved',
        });
        expect(r.stdout).not.toMatch(/http|s3cret/);
      });
    });

    it('a referral the tool cannot read is one line and a failure; the others are saved (exit 1)', async () => {
      serve(A, 'R-1', 'A1');
      referrals.set(B, { id: B, reference: 'R-2', documents: [], visits: {} });
      serve(C, 'R-3', 'C1');
      await inDir(async (d) => {
        const out = join(d, 'out');
        const r = await piped(['referrals', 'download', A, B, C, '-D', out], { env: envIn(d) });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(
          `error: ${B}: the server sent an answer this tool cannot read: the referral: visits is an object, not a list`,
        );
        expect(r.stderr).not.toMatch(/unexpected failure|is not a function|\n\s+at /);
        expect(r.stderr).toMatch(/error: 1 referral not readable \(2 files saved\)\n$/);
        expect(readdirSync(out).sort()).toEqual(['R-1_A1_report.pdf', 'R-3_C1_report.pdf']);
        // Alone, it is the same error `referrals get` gives.
        const alone = await piped(['referrals', 'download', B, '-D', out], { env: envIn(d) });
        expect(alone.code).toBe(1);
        expect(alone.stderr).toMatch(
          /^error: the server sent an answer this tool cannot read: .*visits is an object/,
        );
        expect(alone.stderr).not.toMatch(/\n\s+at /);
      });
    });
  });

  const NOBODY = 65534;
  const asNobody = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
  describe.skipIf(!asNobody)(
    `-D a folder others control: exit 2 before any request${asNobody ? '' : ' (skipped: needs root and setpriv to act as nobody)'}`,
    { sequential: true },
    () => {
      const nobody = (...cmd: string[]) =>
        execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...cmd]);
      it("a folder of nobody's, nobody's symlink to my folder, a world-writable folder without the sticky bit", async () => {
        const r = placed('api');
        await inDir(async (d) => {
          chmodSync(d, 0o755); // nobody may pass through
          const shared = join(d, 'shared');
          mkdirSync(shared);
          chmodSync(shared, 0o1777);
          const theirs = join(shared, 'theirs');
          nobody('mkdir', '-m', '755', theirs);
          const mine = join(d, 'mine');
          mkdirSync(mine, { mode: 0o700 });
          const link = join(shared, 'link');
          nobody('ln', '-s', mine, link);
          const open = join(d, 'open');
          mkdirSync(open);
          chmodSync(open, 0o777);
          const cases: Array<[string, RegExp]> = [
            [theirs, /--dir: will not save into .*theirs: .*theirs belongs to nobody/],
            [
              link,
              /--dir: will not save into .*link: .*link is a symlink owned by nobody, in .*shared, a folder others can write to/,
            ],
            [open, /--dir: will not save into .*open: .*open is writable by others \(mode 0777\)/],
          ];
          for (const [folder, message] of cases) {
            const res = await piped(['referrals', 'download', r.id, '-D', folder], { env: fx.env() });
            expect(res.code, res.stderr).toBe(2);
            expect(res.stderr).toMatch(message);
            expect(res.stderr).toMatch(/hint: .*only you can write/i);
            expect(res.stderr).not.toMatch(/\n\s+at /);
            expect(fx.apiRequests()).toEqual([]);
          }
          expect(readdirSync(mine)).toEqual([]);
          // My own sticky folder, as /tmp, is fine.
          const res = await piped(['referrals', 'download', r.id, '-D', shared], { env: fx.env() });
          expect(res.code, res.stderr).toBe(0);
        });
      });

      it("-D a folder to be made inside nobody's folder: exit 2 before any request, nothing made", async () => {
        const r = placed('api');
        await inDir(async (d) => {
          chmodSync(d, 0o755);
          const shared = join(d, 'shared');
          mkdirSync(shared, { mode: 0o1777 });
          chmodSync(shared, 0o1777);
          execFileSync('chown', [`${NOBODY}:${NOBODY}`, shared]);
          const res = await piped(['referrals', 'download', r.id, '-D', join(shared, 'new', 'sub')], {
            env: fx.env(),
          });
          expect(res.code, res.stderr).toBe(2);
          expect(res.stderr).toMatch(/^error: --dir: will not save into .*sub: .*shared belongs to nobody/);
          expect(fx.apiRequests()).toEqual([]);
          expect(readdirSync(shared)).toEqual([]);
        });
      });

      /**
       * My own folder 0700, inside a folder nobody can rename things in: nobody's own (sticky or not),
       * or root's and world-writable without the sticky bit. While the report is on its way (the
       * server holds it), nobody moves my folder away and puts a symlink to a folder of theirs in its
       * place: the report must never land there. Refused before any request.
       */
      it.for([
        ["nobody's, 1777", 0o1777, true],
        ["nobody's, 0777", 0o777, true],
        ["root's, 0777", 0o777, false],
      ] as const)(
        '-D a folder of mine inside a folder %s: exit 2, and no swap can redirect the files',
        async ([, mode, theirs]) => {
          const ID = '0b7e1f7a-5a0e-4f43-9a4c-2d1b6f0a9e13';
          const pdf = minimalPdf(['Accession: S1']);
          let requested!: () => void;
          const asked = new Promise<void>((r) => (requested = r));
          let release!: () => void;
          const held = new Promise<void>((r) => (release = r));
          let base = '';
          const api = await testServer((req, res) => {
            if (req.url === `/api/v2/referrals/${ID}`)
              return json(res, 200, {
                id: ID,
                reference: 'R-S',
                documents: [],
                visits: [
                  {
                    status: 'report_uploaded',
                    procedures: [{ accession_id: 'S1', report_link: `${base}/api/v2/files/S1.pdf` }],
                  },
                ],
              });
            requested();
            void held.then(() => {
              res.writeHead(200, { 'content-type': 'application/pdf' });
              res.end(pdf);
            });
          });
          base = api.url;
          const d = tempDir();
          try {
            chmodSync(d.path, 0o755); // nobody may pass through
            const shared = join(d.path, 'shared');
            mkdirSync(shared);
            chmodSync(shared, mode);
            if (theirs) execFileSync('chown', [`${NOBODY}:${NOBODY}`, shared]);
            const loot = join(shared, 'loot');
            nobody('mkdir', '-m', '777', loot);
            const mine = join(shared, 'mine');
            mkdirSync(mine, { mode: 0o700 });
            const run = piped(['referrals', 'download', ID, '-D', mine], {
              env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: api.url, IMAGING_CONFIG_DIR: d.path },
            });
            // Without the check, the report is on its way now: nobody swaps my folder for a symlink.
            if ((await Promise.race([asked.then(() => 'asked'), run])) === 'asked') {
              nobody('mv', mine, join(shared, 'old'));
              nobody('ln', '-s', loot, mine);
              release();
            }
            const res = await run;
            expect(readdirSync(loot)).toEqual([]);
            expect(res.code, res.stderr).toBe(2);
            expect(res.stderr).toMatch(
              theirs
                ? /^error: --dir: will not save into .*mine: .*shared belongs to nobody, who could move .*mine away/
                : /^error: --dir: will not save into .*mine: .*shared is writable by others \(mode 0777\), who could move .*mine away/,
            );
            expect(res.stderr).toMatch(/hint: .*only you can write/i);
            expect(res.stderr).not.toMatch(/\n\s+at /);
            expect(api.seen).toEqual([]);
          } finally {
            release();
            await api.close();
            d.cleanup();
          }
        },
      );
    },
  );

  describe.sequential('a download stopped part-way', () => {
    const ID = '0b7e1f7a-5a0e-4f43-9a4c-2d1b6f0a9e12';
    // Bigger than the 64 KiB disk below.
    const big = Buffer.concat([
      Buffer.from('%PDF-1.4\n%'),
      Buffer.alloc(200 * 1024, 0x41),
      Buffer.from('\n%%EOF\n'),
    ]);
    let stall = false;
    let api: Awaited<ReturnType<typeof testServer>>;
    beforeAll(async () => {
      api = await testServer((req, res) => {
        if (req.url === `/api/v2/referrals/${ID}`)
          return json(res, 200, {
            id: ID,
            reference: 'R-9',
            documents: [],
            visits: [
              {
                status: 'report_uploaded',
                procedures: [{ accession_id: 'C1', report_link: `${api.url}/api/v2/C1.pdf` }],
              },
            ],
          });
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(big.length) });
        // Half the file, then nothing: the download is under way when the signal comes.
        if (stall) res.write(big.subarray(0, big.length / 2));
        else res.end(big);
      });
    });
    afterAll(async () => {
      await api.close();
      for (const mounted of [disk, readOnly]) {
        if (mounted.error !== undefined) continue;
        execFileSync('umount', [mounted.path]);
        rmSync(join(mounted.path, '..'), { recursive: true, force: true });
      }
    });
    const envFor = (config: string) => ({
      IMAGING_ENV: 'local',
      IMAGING_BASE_URL: api.url,
      IMAGING_CONFIG_DIR: config,
    });

    const term = paneFixture();
    it('at an 80-column terminal: a progress bar while it downloads; Ctrl-C: exit 130, cursor back, no file', async () => {
      stall = true;
      try {
        const pane = await term.run(['referrals', 'download', ID, '-D', 'out'], {
          ...envFor(term.dir.path),
          IMAGING_KEYCHAIN: 'off',
        });
        const lines = await pane.waitForScreen((l) =>
          l.some((x) => /downloading .*0\/1 files {2}\d/.test(x)),
        );
        for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
        await pane.keys('C-c');
        expect(await pane.exited()).toBe(130);
        expect(await pane.cursorVisible()).toBe(true);
        expect(readdirSync(join(term.dir.path, 'out'))).toEqual([]);
      } finally {
        stall = false;
      }
    });

    it('a real SIGINT mid-download: exit 130, no file and no partial file', async () => {
      stall = true;
      const d = tempDir();
      const out = join(d.path, 'out');
      mkdirSync(out);
      try {
        const asked = () => api.seen.filter((s) => s.url === '/api/v2/C1.pdf').length;
        const earlier = asked();
        const child = spawn(process.execPath, [BIN, 'referrals', 'download', ID, '-D', out], {
          env: { ...envFor(d.path), PATH: process.env.PATH, IMAGING_KEYCHAIN: 'off' },
        });
        const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
        // The report's request has arrived and its first half been sent: the download is under way.
        await until(() => (asked() > earlier ? true : undefined), 'the download');
        child.kill('SIGINT');
        expect(await exited).toBe(130);
        expect(readdirSync(out)).toEqual([]);
      } finally {
        stall = false;
        d.cleanup();
      }
    });

    const readOnly = mountTmpfs('readonly', 'size=16k,mode=0755,ro');
    describe.skipIf(readOnly.error !== undefined)(
      `a folder that cannot be written (a real read-only tmpfs${readOnly.error ? `; skipped: cannot mount one: ${readOnly.error}` : ''})`,
      () => {
        it('-D it, or a folder to be made in it: exit 2 before any request, not after every report is read', async () => {
          for (const target of [readOnly.path, join(readOnly.path, 'new')]) {
            const r = await piped(['referrals', 'download', placed('api').id, '-D', target], {
              env: fx.env(),
            });
            expectUsageError(
              r,
              /--dir: cannot (save|make a folder) in .*: read-only file system/,
              fx.apiRequests().length,
            );
          }
        });

        it('no -D, in it as the current folder: exit 2 before any request, and the hint names -D', async () => {
          const child = spawn(process.execPath, [BIN, 'referrals', 'download', placed('api').id], {
            cwd: readOnly.path,
            env: { ...process.env, ...fx.env(), NO_COLOR: '1' },
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          let stderr = '';
          child.stderr.on('data', (d) => (stderr += d));
          expect(await new Promise((resolve) => child.on('close', resolve))).toBe(2);
          expect(stderr).toBe(
            `error: cannot save in the current folder (${readOnly.path}): read-only file system\nhint: Give a folder to save into: -D DIR.\n`,
          );
          expect(fx.apiRequests()).toEqual([]);
        });
      },
    );

    const disk = mountTmpfs('download', 'size=64k,mode=0700');
    describe.skipIf(disk.error !== undefined)(
      `a full disk (a real 64 KiB tmpfs${disk.error ? `; skipped: cannot mount one: ${disk.error}` : ''})`,
      () => {
        it('a report larger than the room left: one clear line, exit 1, no partial file', async () => {
          const d = tempDir();
          try {
            const r = await piped(['referrals', 'download', ID, '-D', disk.path], { env: envFor(d.path) });
            expect(r.code).toBe(1);
            expect(r.stderr).toContain(
              'error: R-9 C1: could not save R-9_C1_report.pdf: no space left on the device',
            );
            expect(readdirSync(disk.path)).toEqual([]);
          } finally {
            d.cleanup();
          }
        });
      },
    );
  });

  describe.sequential('on a terminal', () => {
    it('shows progress on stderr while it downloads and leaves the line clear', async () => {
      const r = placed('api');
      const t = await onTerminal(['referrals', 'download', r.id, '-D', dir.path], { env: fx.env() });
      expect(t.code).toBe(0);
      expect(t.stderr).toMatch(/downloading .*files/);
      expect(t.stderr.endsWith('\r\u001b[2K\u001b[?25h')).toBe(true);
    });
  });

  describe.sequential('the sandbox allowance', () => {
    it('--from with more referrals than the allowance has left: exit 6 before any request', async () => {
      const env = fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: `mock-download-cost-${process.pid}` });
      expect((await piped(['auth', 'allowance', '--used', '1990'], { env })).code).toBe(0); // 10 left
      const list = join(dir.path, 'ids.txt');
      writeFileSync(
        list,
        `${all()
          .slice(0, 50)
          .map((r) => r.id)
          .join('\n')}\n`,
      );
      fx.reset();
      const r = await piped(['referrals', 'download', '--from', list, '-D', dir.path], { env });
      expect(r.code).toBe(6);
      expect(r.stderr).toMatch(
        /^error: this download needs 50 more requests, more than the ≈10 left in the sandbox allowance: stopped before sending them/m,
      );
      expect(fx.apiRequests()).toHaveLength(0);
      const yes = await piped(['referrals', 'download', '--from', list, '-D', dir.path, '--yes'], { env });
      expect(yes.stderr).toContain('going ahead (--yes)');
      expect(fx.apiRequests().length).toBeGreaterThanOrEqual(50);
    });
  });

  const asRoot = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
  describe.skipIf(!asRoot)(
    `--from FILE of another user (download and watch)${asRoot ? '' : ' (skipped: needs root and setpriv)'}`,
    { sequential: true },
    () => {
      const NOBODY = 65534;
      const nobody = (...cmd: string[]) =>
        execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...cmd]);
      const shared = () => {
        const d = join(dir.path, 'shared');
        mkdirSync(d, { recursive: true });
        chmodSync(dir.path, 0o755);
        chmodSync(d, 0o1777);
        return d;
      };
      const mine = () => {
        const f = join(dir.path, 'mine.txt');
        writeFileSync(f, `${all()[0]!.id}\n`);
        return f;
      };
      const commands = (list: string) => [
        ['referrals', 'download', '--from', list, '-D', join(dir.path, 'out')],
        ['referrals', 'watch', '--from', list, '--within', '0s'],
      ];

      it("another user's file, their symlink in a shared folder, their FIFO: exit 2, no request", async () => {
        const theirs = join(shared(), 'theirs.txt');
        nobody('sh', '-c', `printf '%s\\n' ${all()[1]!.id} > ${theirs}`);
        const link = join(shared(), 'link.txt');
        nobody('ln', '-s', mine(), link);
        const fifo = join(shared(), 'fifo');
        nobody('mkfifo', '-m', '0644', fifo);
        // The other user feeds the FIFO: unchecked, each line would be sent as a search.
        const writer = spawn('setpriv', [
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          '--clear-groups',
          'sh',
          '-c',
          `while :; do printf '%s\\n' 'Garcia, Mary' > ${fifo}; done`,
        ]);
        try {
          for (const [list, why] of [
            [theirs, 'is a file owned by nobody'],
            [link, 'is a symlink owned by nobody'],
            [fifo, 'is a FIFO owned by nobody'],
          ] as const) {
            for (const argv of commands(list)) {
              fx.reset();
              const r = await piped(argv, { env: fx.env() });
              expectUsageError(
                r,
                new RegExp(`--from ${list} ${why}; it is read only from a file of your own`),
                0,
              );
              expect(fx.apiRequests()).toHaveLength(0);
            }
          }
        } finally {
          writer.kill();
        }
        // My own file is read.
        fx.reset();
        const r = await piped(commands(mine())[1]!, { env: fx.env() });
        expect(r.stderr).not.toMatch(/^error:/m);
        expect(fx.apiRequests().length).toBeGreaterThan(0);
      });
    },
  );

  describe.sequential('--from FILE that is not a list of referrals', () => {
    it('a NUL byte or an entry over 200 characters: exit 2 before any request (download and watch)', async () => {
      const bin = join(dir.path, 'ids.bin');
      writeFileSync(bin, Buffer.from(`${all()[0]!.id}\n\0\x01binary\n`));
      const long = join(dir.path, 'long.txt');
      writeFileSync(long, `${all()[0]!.id}\n${'Garcia Mary '.repeat(20)}\n`);
      for (const [file, why] of [
        [bin, 'it holds a NUL byte'],
        [long, 'an entry is over 200 characters'],
      ] as const)
        for (const argv of [
          ['referrals', 'download', '--from', file, '-D', dir.path],
          ['referrals', 'watch', '--from', file, '--within', '0s'],
        ]) {
          fx.reset();
          const r = await piped(argv, { env: fx.env() });
          expectUsageError(r, new RegExp(`${file} is not a list of referrals \\(${why}\\)`), 0);
        }
    });
  });
});
