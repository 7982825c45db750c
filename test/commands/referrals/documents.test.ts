import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../../src/api/types.js';
import { bothForms, expectUsageError, piped, plain, widest } from '../../fake-io.js';
import { json, mockFixture, run, testServer } from '../../helpers.js';
import { paneFixture } from '../../terminal.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

// R-240004 of the emulator's data: a visit with its report and images in, one booked, one at intake, one AOB.
const ID = '2c7aac08-4814-4ecd-a35c-e3374be252de';

// The links as the emulator sends them (its origin, or signed on its storage origin), and as shown: bare.
let sent: Referral;
beforeAll(async () => {
  sent = JSON.parse((await run(['referrals', 'get', ID, '--json'], { env: fx.env() })).stdout);
});
const bare = (link: unknown) => {
  const u = new URL(String(link));
  u.search = '';
  u.hash = '';
  return u.href;
};
const REPORT = () => bare(sent.visits[0]!.procedures[0]!.report_link);
const DOC = () => bare(sent.documents[0]!.url);
/** How a table shows a link: bare, marked when a signature was taken off. */
const shown = (link: unknown) => (/[?#]/.test(String(link)) ? `${bare(link)} (signed)` : bare(link));

describe('imaging referrals documents', () => {
  it('a row per report (in or not yet), images and document; piped, every column; at 80, the links whole', async () => {
    const { terminal, piped: p } = await bothForms(['referrals', 'documents', ID], { env: fx.env() });
    expect(p.code, p.stderr).toBe(0);
    const rows = p.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^KIND +ACCESSION +CPT +BODY PART +VISIT STATUS +LINK +DETAILS$/);
    expect(rows.slice(1).map((l) => l.split(/ {2,}/))).toEqual([
      [
        'report',
        'ACC-100400',
        '72158',
        'Lumbar Spine',
        'report_uploaded',
        shown(sent.visits[0]!.procedures[0]!.report_link),
        '-',
      ],
      [
        'images',
        'ACC-100400',
        '72158',
        'Lumbar Spine',
        'report_uploaded',
        shown(sent.visits[0]!.procedures[0]!.image_link),
        '-',
      ],
      ['report', 'ACC-100410', '73223', 'Shoulder', 'booked', 'not yet (visit: booked)', '-'],
      ['report', '-', '72195', 'Pelvis', 'intake_sent', 'not yet (visit: intake_sent)', '-'],
      ['document', '-', '-', '-', '-', shown(sent.documents[0]!.url), 'kind: aob'],
    ]);
    expect(p.stderr).toBe('');
    expect(terminal.code).toBe(0);
    expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    // At 80 columns the link keeps its room; the visit status is in it when the report is not.
    expect(plain(terminal.stdout)).toMatch(/^report +ACC-100410 .*not yet \(visit: booked\)/m);
    expect(terminal.stderr).toMatch(/^Left out: .*Body part.* \(--wide shows all\)\n$/);
    expect(fx.apiRequests().map((q) => q.path)).toEqual([
      `/api/v2/referrals/${ID}`,
      `/api/v2/referrals/${ID}`,
    ]);
  });

  it('JSON, NDJSON and CSV: the same rows, the document entry as document.<field>', async () => {
    const j = JSON.parse((await piped(['referrals', 'documents', ID, '--json'], { env: fx.env() })).stdout);
    expect(j).toHaveLength(5);
    expect(j[0]).toEqual({
      reference: 'R-240004',
      referral_id: ID,
      kind: 'report',
      document_index: null,
      visit_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      modality: 'MRI',
      visit_status: 'report_uploaded',
      accession_id: 'ACC-100400',
      cpt_code: '72158',
      body_part: 'Lumbar Spine',
      // Booleans in JSON and NDJSON (data); yes/no in tables and CSV.
      available: true,
      link: REPORT(),
      signed: new URL(sent.visits[0]!.procedures[0]!.report_link!).search !== '',
      document: null,
    });
    expect(j[2]).toMatchObject({ kind: 'report', available: false, link: null, visit_status: 'booked' });
    expect(
      j.every(
        (x: Record<string, unknown>) => typeof x.available === 'boolean' && typeof x.signed === 'boolean',
      ),
    ).toBe(true);
    expect(j[4]).toMatchObject({ kind: 'document', document_index: 1, document: { kind: 'aob' } });
    const n = (await piped(['referrals', 'documents', ID, '--format', 'ndjson'], { env: fx.env() })).stdout;
    expect(
      n
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(j);
    const c = await piped(['referrals', 'documents', ID, '--format', 'csv'], { env: fx.env() });
    const rows = parse(c.stdout, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(rows[0]!)).toEqual([
      ...Object.keys(j[0]).filter((k) => k !== 'document'),
      'document.kind',
    ]);
    expect(rows.map((r) => [r.kind, r.available, r['document.kind']])).toEqual([
      ['report', 'yes', ''],
      ['images', 'yes', ''],
      ['report', 'no', ''],
      ['report', 'no', ''],
      ['document', 'yes', 'aob'],
    ]);
    const f = await piped(['referrals', 'documents', ID, '--json', 'kind,link,+document.kind'], {
      env: fx.env(),
    });
    expect(JSON.parse(f.stdout)[4]).toEqual({
      kind: 'document',
      link: DOC(),
      'document.kind': 'aob',
    });
  });

  it('a visit id (or any unknown UUID) is exit 4 with the hint to give the referral', async () => {
    const visit = (await run(['referrals', 'get', ID, '--json'], { env: fx.env() })).stdout;
    const visitId = (JSON.parse(visit) as Referral).visits[0]!.id;
    fx.reset();
    for (const verb of ['documents', 'get']) {
      const r = await piped(['referrals', verb, visitId], { env: fx.env() });
      expect(r.code).toBe(4);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^hint: .*If this is a visit's id, give its referral's id or reference/m);
    }
    // One request each: nothing is asked to find out what the id was.
    expect(fx.apiRequests()).toHaveLength(2);
  });

  it('takes the reference, any case: the list answer that finds it is the one request', async () => {
    const byId = await piped(['referrals', 'documents', ID, '--json'], { env: fx.env() });
    fx.reset();
    const r = await piped(['referrals', 'documents', 'r-240004', '--json'], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(byId.stdout);
    expect(fx.apiRequests().map((q) => q.path.split('?')[0])).toEqual(['/api/v2/referrals']);
  });

  it('none: the referral named by its reference when it has one (given by id or reference), else its id', async () => {
    const empty = fx.mock.referrals.slice(0, 25).find((r) => r.reference === 'R-240000')!;
    expect(empty.visits.flatMap((v) => v.procedures ?? [])).toEqual([]);
    expect(empty.documents ?? []).toEqual([]);
    for (const given of ['R-240000', empty.id]) {
      const r = await piped(['referrals', 'documents', given], { env: fx.env() });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('Referral R-240000 has no procedures and no documents yet.\n');
    }
    const { reference: _, ...bare } = empty as unknown as Record<string, unknown>;
    const server = await testServer((_req, res) => json(res, 200, bare));
    try {
      const r = await piped(['referrals', 'documents', empty.id], {
        env: { ...fx.env(), IMAGING_BASE_URL: server.url },
      });
      expect(r.stderr).toBe(`Referral ${empty.id} has no procedures and no documents yet.\n`);
    } finally {
      await server.close();
    }
  });

  it('an empty argument is a usage error before any request', async () => {
    expectUsageError(
      await piped(['referrals', 'documents', ' '], { env: fx.env() }),
      /the referral id or reference is empty/,
      fx.apiRequests().length,
    );
  });
});

describe('signed links: never their query string, in any format', () => {
  const SECRET = 'X-Amz-Signature=f00dcafe';
  let server: Awaited<ReturnType<typeof testServer>>;
  let referral: Referral;

  beforeAll(async () => {
    referral = JSON.parse((await run(['referrals', 'get', ID, '--json'], { env: fx.env() })).stdout);
    const proc = referral.visits[0]!.procedures[0]!;
    proc.report_link = `https://storage.example.invalid/r/ACC-100400.pdf?X-Amz-Expires=900&${SECRET}`;
    proc.image_link = `https://user:pw@images.example.invalid/s/ACC-100400#token=${SECRET}`;
    referral.documents = [
      {
        type: 'invoice',
        download_url: `https://storage.example.invalid/inv.pdf?${SECRET}`,
        preview: `https://p.example.invalid/x;${SECRET}`,
      },
      // A link in a text and a link of another scheme carry their signature all the same.
      {
        type: 'note',
        pages: 2,
        text: `download at https://storage.example.invalid/a.pdf?${SECRET} now`,
        mirror: `ftp://storage.example.invalid/h.pdf?${SECRET}`,
        copy: `//cdn.example.invalid/c.pdf?${SECRET}`,
        mail: `mailto:records@example.invalid?body=${SECRET}`,
      },
    ];
    server = await testServer((_req, res) => json(res, 200, referral as unknown as Record<string, unknown>));
  });
  afterAll(() => server.close());

  const env = () => ({ ...fx.env(), IMAGING_BASE_URL: server.url });
  const panes = paneFixture();

  it.for(['table', 'json', 'ndjson', 'csv'])('--format %s: bare links, signed: yes', async (format) => {
    const r = await piped(['referrals', 'documents', ID, '--format', format], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('f00dcafe');
    expect(r.stdout).not.toContain('user:pw');
    expect(r.stdout).toContain('https://storage.example.invalid/r/ACC-100400.pdf');
    expect(r.stdout).toContain('https://storage.example.invalid/inv.pdf');
    if (format === 'csv') {
      const rows = parse(r.stdout, { columns: true }) as Array<Record<string, string>>;
      expect(rows.map((x) => [x.kind, x.signed, x.available])).toEqual([
        ['report', 'yes', 'yes'],
        ['images', 'yes', 'yes'],
        ['report', 'no', 'no'],
        ['report', 'no', 'no'],
        ['document', 'yes', 'yes'],
        ['document', 'yes', 'no'],
      ]);
      expect(rows[4]!['document.preview']).toBe('https://p.example.invalid/x');
      expect(rows[5]!['document.pages']).toBe('2');
      expect(rows[5]!['document.text']).toBe('download at https://storage.example.invalid/a.pdf now');
      expect(rows[5]!['document.mirror']).toBe('ftp://storage.example.invalid/h.pdf');
      expect(rows[5]!['document.copy']).toBe('//cdn.example.invalid/c.pdf');
      expect(rows[5]!['document.mail']).toBe('mailto:records@example.invalid');
    }
  });

  it('at a real terminal of 80 columns: no query string on the screen', async () => {
    const pane = await panes.run(['referrals', 'documents', ID], env(), 80);
    expect(await pane.exited()).toBe(0);
    const screen = (await pane.screen()).join('\n');
    expect(screen).toContain('https://storage.example.invalid/');
    expect(screen).not.toMatch(/f00dcafe|user:pw|\?/);
  });

  it('referrals get: the links bare, a report not in yet says so with the visit status', async () => {
    const r = await piped(['referrals', 'get', ID], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('f00dcafe');
    expect(r.stdout).toMatch(
      /^ {7}Report: +https:\/\/storage\.example\.invalid\/r\/ACC-100400\.pdf \(signed\)$/m,
    );
    expect(r.stdout).toMatch(/^ {7}Report: +not yet \(visit: booked\)$/m);
    const docs = r.stdout.slice(r.stdout.indexOf('\nDocuments (6)\n')).split('\n\n')[0]!.split('\n').slice(2);
    expect(docs.map((l) => l.trim().split(/ {2,}/))).toEqual([
      ['report', 'ACC-100400', '72158', 'Lumbar Spine', 'available'],
      ['images', 'ACC-100400', '72158', 'Lumbar Spine', 'available'],
      ['report', 'ACC-100410', '73223', 'Shoulder', 'not yet (visit: booked)'],
      ['report', '-', '72195', 'Pelvis', 'not yet (visit: intake_sent)'],
      ['document 1', 'type: invoice; preview: https://p.example.invalid/x', 'available'],
      [
        'document 2',
        'type: note; pages: 2; text: download at https://storage.example.invalid/a.pdf now; mirror: ftp://storage.example.invalid/h.pdf; copy: //cdn.example.invalid/c.pdf; mail: mailto:records@example.invalid',
        'no link',
      ],
      ['Links: imaging referrals documents R-240004'],
      // The invoice's link is its download_url: download finds it as this view does.
      ['Files: imaging referrals download R-240004 --reports --documents'],
    ]);
  });
});

describe('at a real terminal of 80 columns', () => {
  const panes = paneFixture();

  it('fits, links whole or wrapped under their column, a report not in says so with the visit status', async () => {
    const pane = await panes.run(['referrals', 'documents', ID], fx.env(), 80);
    expect(await pane.exited()).toBe(0);
    const screen = (await pane.screen()).filter((l) => l.trim() !== '');
    expect(screen[0]).toMatch(/^KIND +ACCESSION +.*LINK +DETAILS$/);
    for (const line of screen) expect([...line].length).toBeLessThanOrEqual(80);
    expect(screen).toContainEqual(expect.stringMatching(/^report +ACC-100410 .*not yet \(visit: booked\)/));
    expect(screen.at(-1)).toMatch(/^Left out: .* \(--wide shows all\)$/);
    expect(screen.join('\n')).not.toContain('?');
    // The link column, read down, is the links.
    const at = screen[0]!.indexOf('LINK');
    const column = screen
      .slice(1, -1)
      .map((l) => l.slice(at).split(/ {2,}/)[0]!.trim())
      .join('');
    expect(column).toContain(REPORT());
    expect(column).toContain(DOC());
  });
});
