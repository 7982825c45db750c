import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../src/api/types.js';
import { mockFixture, type RunOptions, run, run as runCli, tempDir } from '../helpers.js';
import '../reliability.js';
import { parseFault } from '../../src/emulator/faults.js';

// The emulator answers with what the request set, serves a documented guess at
// the referral update route, and advances a visit with or without a webhook URL.

const fx = mockFixture({ referrals: 30 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

const icd = () => fx.mock.data.icd10[3]!;
const cpt = () => fx.mock.data.cpt.find((c) => c.code === '73721' && c.laterality === 'left')!;

describe('referrals create echoes the payload', () => {
  it('date of birth, visits, procedures, ICD-10 codes, law firm and payment type are what was sent', async () => {
    const firm = fx.mock.data.lawFirms[2]!;
    const payload = {
      referral: {
        line_of_business: 'personal_injury',
        payment_type: 'pip',
        incident_state: 'PA',
        law_firm_id: firm.id,
        icd10_code_ids: [icd().id],
        scheduling_mode: 'anytime_anywhere',
        patient: {
          first_name: 'Ada',
          last_name: 'Lovelace',
          date_of_birth_iso: '1985-12-10',
          gender: 'female',
        },
        visits: [{ modality: 'MRI', procedures: [{ cpt_code_id: cpt().id }] }],
      },
    };
    const r = await run(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: JSON.stringify(payload),
    });
    expect(r.code).toBe(0);
    const created = JSON.parse(r.stdout) as Referral;
    expect(created.patient).toMatchObject({
      first_name: 'Ada',
      last_name: 'Lovelace',
      date_of_birth_iso: '1985-12-10',
      date_of_birth: '12/10/1985',
      gender: 'female',
      email: null,
    });
    expect(created.payment_type).toBe('pip');
    expect(created.incident_state).toBe('PA');
    expect(created.law_firm).toEqual({ id: firm.id, name: firm.name });
    expect(created.icd10_codes.map((c) => c.code)).toEqual([icd().code]);
    expect(created.visits).toHaveLength(1);
    expect(created.visits[0]).toMatchObject({ modality: 'MRI', status: 'pending' });
    expect(created.visits[0]!.procedures[0]).toMatchObject({
      cpt_code: '73721',
      cpt_code_id: cpt().id,
      laterality: 'left',
      body_part: cpt().body_part_name,
    });
    // Nothing borrowed from another referral.
    expect(created.call_notes).toEqual([]);
    expect(created.partner_metadata).toBeUndefined();
    const got = await run(['referrals', 'get', created.id, '--json'], { env: fx.env() });
    expect(JSON.parse(got.stdout)).toEqual(created);
  });

  it('a CPT code of several body parts without its cpt_code_id is refused (422 with the reason), not taken as the first', async () => {
    const before = fx.mock.referrals.total;
    const payload = {
      referral: {
        patient: { first_name: 'Ada', last_name: 'Lovelace' },
        visits: [{ modality: 'MRI', procedures: [{ cpt_code: '73721', laterality: 'left' }] }],
      },
    };
    const r = await run(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: JSON.stringify(payload),
    });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('CPT code 73721 maps to several body parts (Hip, Knee, Ankle)');
    expect(r.stderr).toContain('cpt_code_id');
    expect(fx.mock.referrals.total).toBe(before);
    // A code of one body part is still taken by its code.
    const one = await run(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: JSON.stringify({
        referral: {
          patient: { first_name: 'Ada', last_name: 'Lovelace' },
          visits: [{ procedures: [{ cpt_code: '70551' }] }],
        },
      }),
    });
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout).visits[0].procedures[0]).toMatchObject({ body_part: 'Brain' });
  });

  it('the legacy payment_type "pi" becomes what the service returns (lien), never another referral\'s', async () => {
    const r = await run(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: JSON.stringify({ payment_type: 'pi', patient: { first_name: 'A', last_name: 'B' } }),
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ payment_type: 'lien', visits: [], icd10_codes: [] });
  });

  it('an unknown law firm or ICD-10 id is a 422 (exit 7), nothing created', async () => {
    const before = fx.mock.referrals.total;
    const r = await run(['referrals', 'create', '--file', '-'], {
      env: fx.env(),
      stdin: JSON.stringify({
        law_firm_id: '00000000-0000-4000-8000-000000000000',
        patient: { first_name: 'A', last_name: 'B' },
      }),
    });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('Law firm 00000000-0000-4000-8000-000000000000 does not exist');
    expect(fx.mock.referrals.total).toBe(before);
  });
});

describe('POST /patients (through imaging api)', () => {
  it('keeps weight and height as sent (typed -F) and every other field the payload sets', async () => {
    const r = await run(
      [
        'api',
        'POST',
        '/patients',
        '-f',
        'patient[first_name]=Ada',
        '-f',
        'patient[last_name]=Lovelace',
        '-F',
        'patient[weight]=130',
        '-F',
        'patient[height_feet]=5',
        '-f',
        'patient[city]=Philadelphia',
      ],
      { env: fx.env() },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ weight: 130, height_feet: 5, city: 'Philadelphia' });
  });
});

describe('the referral update route (a guess: PATCH /referrals/ID)', () => {
  it('changes the fields it may and returns the referral; referrals get shows the change', async () => {
    const target = fx.mock.referrals.at(1);
    const firm = fx.mock.data.lawFirms[5]!;
    const file = join(dir.path, 'update.json');
    writeFileSync(
      file,
      JSON.stringify({
        referral: { wc_number: 'WCB-2026-99999', law_firm_id: firm.id, icd10_code_ids: [icd().id] },
      }),
    );
    const r = await run(['api', 'PATCH', `/referrals/${target.id}`, '--input', file], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    const updated = JSON.parse(r.stdout) as Referral;
    expect(updated).toMatchObject({ id: target.id, wc_number: 'WCB-2026-99999', law_firm: { id: firm.id } });
    expect(updated.icd10_codes.map((c) => c.code)).toEqual([icd().code]);
    expect(updated.visits).toEqual(target.visits);
    const got = await run(['referrals', 'get', target.id, '--json'], { env: fx.env() });
    expect(JSON.parse(got.stdout)).toEqual(updated);
  });

  it('a field it may not change is a 422 naming it (exit 7); an unknown id is 404', async () => {
    const target = fx.mock.referrals.at(2);
    const bad = await run(['api', 'PATCH', `/referrals/${target.id}`, '-f', 'referral[status]=closed'], {
      env: fx.env(),
    });
    expect(bad.code).toBe(7);
    expect(bad.stderr).toContain('status cannot be updated');
    expect(fx.mock.referrals.at(2).status).toBe(target.status);
    const missing = await run(
      ['api', 'PATCH', '/referrals/00000000-0000-4000-8000-000000000000', '-f', 'referral[wc_number]=x'],
      { env: fx.env() },
    );
    expect(missing.code).toBe(4);
  });
});

describe('the referral update refuses values of the wrong type', () => {
  // Seen: this body was a 200 that stored incident_state null, referring_provider null and no ICD-10
  // codes in place of what was there.
  it('a 422 (exit 7) naming each field of the wrong type; the stored referral is unchanged', async () => {
    // A referral with all three set, so that a wipe would show.
    const target = fx.mock.referrals
      .slice(0, 100)
      .find((x) => x.incident_state && x.referring_provider && x.icd10_codes.length > 0)!;
    const before = JSON.parse(
      (await run(['referrals', 'get', target.id, '--json'], { env: fx.env() })).stdout,
    );
    const body = JSON.stringify({
      referral: { incident_state: 123, referring_provider: { a: 1 }, icd10_code_ids: 'x' },
    });
    const r = await run(['api', 'PATCH', `/referrals/${target.id}`, '--input', '-'], {
      env: fx.env(),
      stdin: body,
    });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('incident_state must be a string or null, not a number');
    expect(r.stderr).toContain('referring_provider must be a string or null, not an object');
    expect(r.stderr).toContain('icd10_code_ids must be an array of ICD-10 code ids, not a string');
    const after = JSON.parse(
      (await run(['referrals', 'get', target.id, '--json'], { env: fx.env() })).stdout,
    );
    expect(after).toEqual(before);
  });

  it.for<[string, unknown]>([
    ['wc_number', 5],
    ['law_firm_id', ['x']],
    ['insurance_number', true],
    ['icd10_codes', [5]],
    ['icd10_code_ids', null],
  ])('%s: %j is refused, naming it', async ([key, value]) => {
    const target = fx.mock.referrals.at(4);
    const res = await fetch(`${fx.mock.url}/api/v2/referrals/${target.id}`, {
      method: 'PUT',
      headers: { authorization: 'Bearer mock-token', 'content-type': 'application/json' },
      body: JSON.stringify({ referral: { [key]: value } }),
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain(`${key} must be`);
    expect(fx.mock.referrals.at(4)).toEqual(target);
  });

  it('null still clears a text field, and [] the ICD-10 codes', async () => {
    const target = fx.mock.referrals.at(5);
    const r = await run(['api', 'PATCH', `/referrals/${target.id}`, '--input', '-'], {
      env: fx.env(),
      stdin: JSON.stringify({ referral: { wc_number: null, icd10_code_ids: [] } }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ wc_number: null, icd10_codes: [] });
  });
});

describe('visit advance', () => {
  it('advances without --webhook-url (nothing sent), and the API serves the new status', async () => {
    const r = fx.mock.referrals.slice(0, 30).find((x) => x.visits.some((v) => v.status === 'pending'))!;
    const visit = r.visits.find((v) => v.status === 'pending')!;
    const res = await fetch(`${fx.mock.url}/__mock/referrals/${r.id}/visits/${visit.id}/advance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string[]; event_id: string | null };
    expect(body.event_id).toBeNull();
    expect(body.status[0]).toBe('pending');
    const got = await run(['referrals', 'get', r.id, '--json'], { env: fx.env() });
    const after = (JSON.parse(got.stdout) as Referral).visits.find((v) => v.id === visit.id)!;
    expect(after.status).toBe(body.status[1]);
    expect(after.status).not.toBe('pending');
  });
});

describe('the data holds what the README promises', () => {
  it('a law firm with a CJK name, which a table aligns by terminal cells', async () => {
    const cjk = fx.mock.data.lawFirms.filter((f) =>
      /[\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(f.name),
    );
    expect(cjk.length).toBeGreaterThan(0);
    const r = await run(['law-firms', 'search', 'kim'], { env: fx.env() });
    expect(r.code).toBe(0);
    const [header, row] = r.stdout.split('\n');
    expect(row).toContain(cjk[0]!.name);
    // Each wide character takes two cells: CITY starts in the same cell on both lines.
    const cellsBefore = (line: string, text: string) =>
      [...line.slice(0, line.indexOf(text))].reduce(
        (n, ch) => n + (/[\p{Script=Han}\p{Script=Hangul}]/u.test(ch) ? 2 : 1),
        0,
      );
    expect(cellsBefore(row!, 'Los Angeles')).toBe(cellsBefore(header!, 'CITY'));
  });

  it('icd10 "meniscus tear" finds the meniscus tears (every word, in any order)', async () => {
    const r = await run(['icd10', 'meniscus tear', '--json'], { env: fx.env() });
    const codes = JSON.parse(r.stdout) as Array<{ short_description: string }>;
    expect(codes.length).toBeGreaterThan(0);
    for (const c of codes) expect(c.short_description.toLowerCase()).toMatch(/(?=.*meniscus)(?=.*tear)/);
  });
});

describe('the fault injection itself', () => {
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
   * waited. The default back-off (doubled each time, half of it random) is checked too.
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

  // Short client timeout so the `slow` fault (1.5 s) counts as a timeout.
  const env = () => fx.env({ IMAGING_TOKEN: 'mock-fault-suite' });

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

describe('a malformed %-escape in a path', () => {
  it('is a 404, not a 500 (a report, a document, a referral id), and the emulator goes on', async () => {
    const id = fx.mock.referrals.at(0).id;
    for (const path of [
      `/api/v2/referrals/${id}/reports/%E0%A4%A.pdf`,
      `/api/v2/referrals/${id}/documents/%E0%A4%A`,
      '/api/v2/referrals/%E0%A4%A',
    ]) {
      const res = await fetch(`${fx.mock.url}${path}`, { headers: { authorization: 'Bearer mock-token' } });
      expect(res.status, path).toBe(404);
    }
    const ok = await fetch(`${fx.mock.url}/api/v2/referrals/${id}`, {
      headers: { authorization: 'Bearer mock-token' },
    });
    expect(ok.status).toBe(200);
  });
});

describe('emulator delays longer than a Node timer holds (2^31-1 ms)', () => {
  it('mock --latency of 30 days (in ms) holds the answer, rather than answering after 1 ms', async () => {
    const slow = mockFixture({ referrals: 1, latencyMs: 30 * 86_400_000 });
    await slow.start();
    try {
      const res = fetch(`${slow.mock.url}/api/v2/modalities`, {
        headers: { authorization: 'Bearer mock-token' },
        signal: AbortSignal.timeout(300),
      }).then(
        (r) => `answered ${r.status}`,
        (err: Error) => err.name,
      );
      expect(await res).toBe('TimeoutError');
    } finally {
      await slow.stop();
    }
  });
});
