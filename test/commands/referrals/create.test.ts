import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GlobalOptions } from '../../../src/cli/globals.js';
import { Context } from '../../../src/context.js';
import { cptExamplePairs } from '../../../src/referrals/cpt-examples.js';
import { type Asker, askNewReferral, type Choice } from '../../../src/referrals/guided.js';
import {
  CREATE_LINES_OF_BUSINESS,
  isoDateOfBirth,
  type NewReferral,
  referralPayload,
} from '../../../src/referrals/new-referral.js';
import { expectUsageError, hasEscapes, onTerminal, piped, plain } from '../../fake-io.js';
import { fakeIO, json, mockFixture, run, testServer as startTestServer, tempDir } from '../../helpers.js';
import { hasTmux, type Pane, paneFixture } from '../../terminal.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const payload = (first: string) =>
  JSON.stringify({
    line_of_business: 'personal_injury',
    patient: { first_name: first, last_name: 'Lovelace' },
  });

describe('imaging referrals create', () => {
  it('creates a referral from a file and says which, on a terminal and piped', async () => {
    const file = join(fx.configDir, 'referral.json');
    writeFileSync(file, payload('Ada'));
    const t = await onTerminal(['referrals', 'create', '--file', file], { env: fx.env() });
    expect(t.code).toBe(0);
    expect(plain(t.stderr)).toMatch(/^Created referral R-\d+ [0-9a-f-]{36}/);
    expect(plain(t.stdout)).toMatch(/^Referral R-\d+ {2}[0-9a-f-]{36}\n/);
    expect(plain(t.stdout)).toContain('Ada Lovelace');
    const p = await piped(['referrals', 'create', '--file', '-'], { env: fx.env(), stdin: payload('Grace') });
    expect(p.code).toBe(0);
    expect(hasEscapes(p.stdout + p.stderr)).toBe(false);
    expect(p.stderr).toMatch(/^Created referral R-\d+ [0-9a-f-]{36}/);
    expect(p.stdout).toContain('Grace Lovelace');
    expect(fx.apiRequests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /api/v2/referrals',
      'POST /api/v2/referrals',
    ]);
  });

  it('prints the created referral as JSON, and it can be read back', async () => {
    const r = await piped(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: payload('Hedy'),
    });
    const created = JSON.parse(r.stdout);
    expect(created.patient.first_name).toBe('Hedy');
    const got = JSON.parse(
      (await piped(['referrals', 'get', created.id, '--json'], { env: fx.env() })).stdout,
    );
    expect(got.reference).toBe(created.reference);
  });

  it("lists the server's validation errors, exit 7", async () => {
    const r = await piped(['referrals', 'create', '--file', '-'], {
      env: fx.env(),
      stdin: JSON.stringify({ line_of_business: 'personal_injury', patient: {} }),
    });
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("- Patient first name can't be blank");
  });

  it('refuses a missing file or a body that is not a JSON object, before any request', async () => {
    const seen = () => fx.apiRequests().length;
    expectUsageError(await piped(['referrals', 'create'], { env: fx.env() }), /--file/, seen());
    expectUsageError(
      await piped(['referrals', 'create', '--file', '-'], { env: fx.env(), stdin: '{"patient": {' }),
      /not valid JSON/,
      seen(),
    );
    expectUsageError(
      await piped(['referrals', 'create', '--file', '-'], { env: fx.env(), stdin: '[1,2]' }),
      /must be a JSON object/,
      seen(),
    );
  });
});

describe('referrals create', () => {
  const fx = mockFixture({ referrals: 250 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    fx.reset();
    dir = tempDir();
  });

  afterEach(() => dir.cleanup());

  const payload = {
    line_of_business: 'personal_injury',
    patient: { first_name: 'Ada', last_name: "O'Neil, Jr." },
    note: 'x',
  };

  it('creates from a file, sending the bytes unchanged', async () => {
    const file = join(dir.path, 'ref.json');
    const text = `{\n  "line_of_business": "personal_injury",\n  "patient": {"first_name": "Ada", "last_name": "Lovelace"}\n}\n`;
    writeFileSync(file, text);
    const seen: string[] = [];
    const proxy = await startTestServer((_req, res, body) => {
      seen.push(body.toString('utf8'));
      json(res, 201, {
        id: '11111111-1111-4111-8111-111111111111',
        reference: 'R-1',
        patient: { first_name: 'Ada' },
        visits: [],
      });
    });
    try {
      const r = await run(['referrals', 'create', '--file', file], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: proxy.url, IMAGING_CONFIG_DIR: dir.path },
      });
      expect(r.code).toBe(0);
      expect(seen).toEqual([text]);
      expect(r.stderr).toContain('Created referral R-1 11111111-1111-4111-8111-111111111111');
    } finally {
      await proxy.close();
    }
  });

  it('creates from stdin against the emulator', async () => {
    const r = await run(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: JSON.stringify(payload),
    });
    expect(r.code).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created.patient.last_name).toBe("O'Neil, Jr.");
    const got = await run(['referrals', 'get', created.id, '--json'], { env: fx.env() });
    expect(JSON.parse(got.stdout).reference).toBe(created.reference);
  });

  it('rejects invalid JSON before sending anything (exit 2)', async () => {
    const r = await run(['referrals', 'create', '--file', '-'], { env: fx.env(), stdin: '{"patient": {' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('standard input is not valid JSON');
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('lists the 422 errors with exit 7', async () => {
    const r = await run(['referrals', 'create', '--file', '-'], {
      env: fx.env(),
      stdin: JSON.stringify({ line_of_business: 'patient_direct', patient: {} }),
    });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("- Patient first name can't be blank");
    expect(r.stderr).toContain('- Line of business patient_direct cannot be selected on referral creation');
  });

  it('in production, needs --yes when there is no terminal, and asks on a terminal', async () => {
    const env = {
      IMAGING_ENV: 'production',
      IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
      IMAGING_TOKEN: 'mock-prod',
      IMAGING_CONFIG_DIR: dir.path,
    };
    const file = join(dir.path, 'p.json');
    writeFileSync(file, JSON.stringify(payload));
    const refused = await run(['referrals', 'create', '--file', file], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect(fx.apiRequests()).toHaveLength(0);
    const declined = await run(['referrals', 'create', '--file', file], {
      env,
      stdinIsTTY: true,
      deps: { prompter: { secret: async () => '', confirm: async () => false } },
    });
    expect(declined.code).toBe(1);
    expect(declined.stderr).toContain('Nothing was sent.');
    expect(fx.apiRequests()).toHaveLength(0);
    const yes = await run(['referrals', 'create', '--file', file, '--yes'], { env });
    expect(yes.code).toBe(0);
    expect(fx.apiRequests()).toHaveLength(1);
  });
});

describe('referrals create: the payload the guided flow builds', () => {
  const fx = mockFixture();
  beforeAll(() => fx.start());
  afterAll(() => fx.stop());
  beforeEach(() => fx.reset());

  const knee = (side: 'left' | 'right') => {
    const m = fx.mock.data.cpt.find(
      (c) => c.code === '73721' && c.body_part_name === 'Knee' && c.laterality === side,
    );
    if (!m) throw new Error('no knee mapping in the emulator');
    return m;
  };
  const answers = (): NewReferral => ({
    patient: { first_name: 'Ada', last_name: "O'Hara", date_of_birth_iso: '1985-12-10', email: '' },
    lineOfBusiness: 'personal_injury',
    paymentType: 'lien',
    incidentState: 'TX',
    exams: [
      { modality: 'MRI', mapping: knee('left') },
      { modality: 'X-Ray', mapping: { ...knee('right'), id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa' } },
      { modality: 'MRI', mapping: knee('right') },
    ],
    icd10Ids: [fx.mock.data.icd10[0]!.id, fx.mock.data.icd10[0]!.id],
    lawFirmId: undefined,
    schedulingMode: 'anytime_anywhere',
    preferredLocationId: undefined,
  });

  it("groups exams of one modality into one visit, drops empty answers and repeated codes: the README's shape", () => {
    const { referral } = referralPayload(answers());
    expect(referral.visits).toEqual([
      { modality: 'MRI', procedures: [{ cpt_code_id: knee('left').id }, { cpt_code_id: knee('right').id }] },
      { modality: 'X-Ray', procedures: [{ cpt_code_id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa' }] },
    ]);
    expect(referral.patient).toEqual({
      first_name: 'Ada',
      last_name: "O'Hara",
      date_of_birth_iso: '1985-12-10',
    });
    expect(referral.icd10_code_ids).toEqual([fx.mock.data.icd10[0]!.id]);
    expect(referral).not.toHaveProperty('law_firm_id');
    expect(referral).not.toHaveProperty('preferred_location_id');
    expect(referral.scheduling_mode).toBe('anytime_anywhere');
    expect(CREATE_LINES_OF_BUSINESS).not.toContain('patient_direct');
  });

  it('dates of birth as typed: both spellings, no impossible or future date', () => {
    const today = new Date('2026-01-01T00:00:00Z');
    expect(isoDateOfBirth('1985-12-10', today)).toEqual({ iso: '1985-12-10' });
    expect(isoDateOfBirth('3/4/1990', today)).toEqual({ iso: '1990-03-04' });
    expect(isoDateOfBirth('02/30/1990', today)).toEqual({ error: 'there is no such date: 02/30/1990' });
    expect(isoDateOfBirth('2027-01-01', today)).toHaveProperty('error');
    expect(isoDateOfBirth('10 Dec 1985', today)).toHaveProperty('error');
  });

  it('the emulator takes the payload: the left knee, the ICD-10 code and the scheduling mode come back', async () => {
    const a = answers();
    a.exams = [{ modality: 'MRI', mapping: knee('left') }];
    a.lawFirmId = fx.mock.data.lawFirms[0]!.id;
    const r = await run(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: JSON.stringify(referralPayload(a)),
    });
    expect(r.code, r.stderr).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created.visits[0].procedures[0]).toMatchObject({ body_part: 'Knee', laterality: 'left' });
    expect(created.icd10_codes.map((c: { id: string }) => c.id)).toEqual([fx.mock.data.icd10[0]!.id]);
    expect(created.law_firm.id).toBe(a.lawFirmId);
    expect(created.scheduling_mode).toBe('anytime_anywhere');
    expect(created.incident_state).toBe('TX');
  });

  it('--dry-run prints the file as it would go and sends nothing, without a token', async () => {
    const text = '{ "referral": { "patient": { "first_name": "Ada", "last_name": "Lovelace" } } }\n';
    const r = await run(['referrals', 'create', '--file', '-', '--dry-run'], {
      env: { ...fx.env(), IMAGING_ENV: 'sandbox', IMAGING_BASE_URL: fx.mock.url },
      stdin: text,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(text);
    expect(r.stderr).toContain(
      `Nothing was sent (--dry-run): this is the body of POST ${fx.mock.url}/api/v2/referrals.`,
    );
    expect(fx.apiRequests()).toEqual([]);
  });

  it('a 5xx on create: the referral may exist, and the referrals find command to check is named', async () => {
    const failing = mockFixture({ faults: ['500'] });
    await failing.start();
    try {
      const r = await run(['referrals', 'create', '--file', '-'], {
        env: failing.env(),
        stdin: JSON.stringify(referralPayload(answers())),
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('status:     500');
      expect(r.stderr).toMatch(/may have been created all the same \(the API has no idempotency key\)/);
      expect(r.stderr).toContain("imaging --env local referrals find 'O'\\''Hara, Ada'");
      // Sent once: a POST is never retried.
      expect(failing.apiRequests().map((q) => q.method)).toEqual(['POST']);
    } finally {
      await failing.stop();
    }
  });
});

// The guided flow at a real terminal (a tmux pane), against the emulator, end to end.
describe.skipIf(!hasTmux)(
  `referrals create, guided, at a real terminal${hasTmux ? '' : ' (skipped: tmux is not installed)'}`,
  () => {
    const fx = mockFixture();
    const panes = paneFixture();
    beforeAll(() => fx.start());
    afterAll(() => fx.stop());
    beforeEach(() => fx.reset());

    /** Waits for the question (inquirer's "? " line), then types. */
    const answer = async (pane: Pane, question: string, ...keys: string[]) => {
      await pane.waitForScreen((lines) => lines.some((l) => l.startsWith(`? ${question}`)));
      if (keys.length > 0) await pane.keys(...keys);
    };
    /** A choice of a list that does not change: moves to `pick` and takes it. */
    const choose = async (pane: Pane, question: string, pick: string) => {
      await answer(pane, question);
      const lines = await pane.waitForScreen((ls) => ls.some((l) => l.includes(pick)));
      const list = lines.slice(lines.findIndex((l) => l.startsWith(`? ${question}`)) + 1);
      await pane.keys(...Array(list.findIndex((l) => l.includes(pick))).fill('Down'), 'Enter');
    };
    /**
     * Types a search and takes the first result once it is `pick` for the whole term (a narrower term
     * keeps the order of the results, so an earlier answer cannot put another first).
     */
    const searchFor = async (pane: Pane, question: string, term: string, pick: string) => {
      await answer(pane, question, term);
      await pane.waitForScreen((ls) => {
        const at = ls.findIndex((l) => l.startsWith(`? ${question}`) && l.endsWith(term));
        return at >= 0 && (ls[at + 1] ?? '').includes(pick);
      });
      await pane.keys('Enter');
    };

    it('asks each field, shows the payload, asks before sending, and creates the referral', async () => {
      const cache = join(panes.dir.path, 'cache');
      const config = join(panes.dir.path, 'config');
      const env = { ...fx.env(), IMAGING_CONFIG_DIR: config, IMAGING_CACHE_DIR: cache };
      const pane = await panes.run(['referrals', 'create'], env, 120);
      await answer(pane, 'Patient first name', 'Ada', 'Enter');
      await answer(pane, 'Patient last name', 'Quillfeather', 'Enter');
      await answer(pane, 'Date of birth', '12/10/1985', 'Enter');
      await answer(pane, 'Phone number', 'Enter');
      await answer(pane, 'Email', 'Enter');
      await answer(pane, 'Line of business', 'Enter'); // personal injury
      await answer(pane, 'Payment type', 'Enter'); // lien, its default
      await answer(pane, 'Incident state', 'zz', 'Enter');
      await pane.waitForScreen((ls) => ls.some((l) => l.includes('a US state or territory')));
      await pane.keys('BSpace', 'BSpace', 'tx', 'Enter');
      await answer(pane, 'Exam: modality', 'Enter'); // MRI
      await choose(pane, 'Body part', 'Knee');
      await answer(pane, 'CPT code of the MRI Knee exam', '70551', 'Enter');
      await pane.waitForScreen((ls) => ls.some((l) => l.includes('70551 is not a MRI Knee exam')));
      await pane.keys(...Array(5).fill('BSpace'), '73721', 'Enter');
      await choose(pane, 'Which one', 'Knee, left, without contrast (73721)');
      await answer(pane, 'Add another exam?', 'Enter');
      await searchFor(pane, 'ICD-10 code', 'M25.562', 'Pain in left knee');
      await choose(pane, 'Another ICD-10 code', 'no more ICD-10 codes');
      await searchFor(pane, 'Law firm', 'jones', 'Smith, Jones');
      await answer(pane, 'Scheduling mode', 'Enter');
      await answer(pane, 'Preferred imaging center id', 'Enter');
      await answer(pane, 'Send this referral to', 'y', 'Enter');
      expect(await pane.exited()).toBe(0);
      const screen = (await pane.screen()).join('\n');
      expect(screen).toContain('"cpt_code_id": "fd4562cc-07dc-497f-8406-92bbd723216e"');
      expect(screen).toMatch(/Created referral R-\d+ [0-9a-f-]{36}/);
      const posts = fx.apiRequests().filter((q) => q.method === 'POST');
      expect(posts.map((q) => q.path)).toEqual(['/api/v2/referrals']);
      const created = fx.mock.referrals.at(fx.mock.referrals.total - 1);
      expect(created.patient).toMatchObject({ last_name: 'Quillfeather', date_of_birth_iso: '1985-12-10' });
      expect(created.incident_state).toBe('TX');
      expect(created.visits[0]!.procedures[0]).toMatchObject({ body_part: 'Knee', laterality: 'left' });
      expect(created.icd10_codes.map((c) => c.code)).toEqual(['M25.562']);
      expect(created.law_firm.name).toMatch(/^Smith, Jones/);
      // Nothing typed reached the disk: no name, no search term, in the cache or the config folder.
      // Node's compile cache (Node 22+) holds the tool's own code, whose emulator names a firm Jones.
      for (const file of filesUnder(panes.dir.path).filter((f) => !f.includes('/compile-cache/'))) {
        const text = readFileSync(file, 'latin1');
        expect(text, file).not.toMatch(/Quillfeather|M25\.562|jones/i);
      }
      expect(filesUnder(cache).length).toBeGreaterThan(0); // the reference lists were kept
    });
  },
);

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe('referrals create: the guided questions, in-process with scripted answers', () => {
  const fx = mockFixture();
  beforeAll(() => fx.start());
  afterAll(() => fx.stop());

  /**
   * Answers by question (the start of its message), in turn: a text answer goes through the
   * prompt's own check (a refusal is recorded, and the next answer tried), a choice is picked by
   * its name, a search types the term and picks by name.
   */
  function scripted(script: Record<string, string[]>) {
    const refusals: string[] = [];
    const asked: string[] = [];
    const next = (message: string) => {
      asked.push(message);
      const key = Object.keys(script).find((k) => message.startsWith(k));
      const answer = key === undefined ? undefined : script[key]!.shift();
      if (answer === undefined) throw new Error(`no answer for "${message}"`);
      return answer;
    };
    const pick = <T>(message: string, choices: readonly Choice<T>[], name: string) => {
      const found = choices.find((c) => c.name.includes(name));
      if (!found)
        throw new Error(`"${message}": no choice ${name} in ${choices.map((c) => c.name).join(' | ')}`);
      return found.value;
    };
    const ask: Asker = {
      async text(message, opts = {}) {
        for (;;) {
          const answer = next(message);
          const verdict = opts.validate ? await opts.validate(answer) : true;
          if (verdict === true) return answer;
          refusals.push(String(verdict));
        }
      },
      async select(message, choices) {
        return pick(message, choices, next(message));
      },
      async search(message, source) {
        const [term, name] = next(message).split(' => ') as [string, string];
        return pick(message, await source(term, new AbortController().signal), name);
      },
      async confirm(message) {
        return next(message) === 'y';
      },
    };
    return { ask, refusals, asked };
  }

  it('asks in order, checks the answers where they are typed, and builds the payload', async () => {
    const ctx = new Context({
      io: fakeIO().io,
      env: { ...fx.env(), IMAGING_KEYCHAIN: 'off' },
      globals: { cache: false } as GlobalOptions,
    });
    const { ask, refusals } = scripted({
      'Patient first name': ['Ada'],
      'Patient last name': ['Lovelace'],
      'Date of birth': ['1985-02-30', '12/10/1985'],
      'Phone number': ['555', '(702) 555-0100'],
      Email: [''],
      'Line of business': ['workers comp'],
      'Payment type': ['insurance'],
      'Incident state': ['Texas', 'nv'],
      'Exam: modality': ['MRI'],
      'Next exam: modality': ['X-Ray'],
      'Body part': ['Knee', 'Knee'],
      'CPT code of the MRI Knee exam': ['7372', '70551', '73721'],
      'CPT code of the X-Ray Knee exam': ['73562'],
      'Which one': ['left', 'right'],
      'Add another exam?': ['y', 'n'],
      'ICD-10 code': ['M25.562 => Pain in left knee'],
      'Another ICD-10 code': [' => no more ICD-10 codes'],
      'Law firm': ['zzzz-nobody => no law firm'],
      'Scheduling mode': ['existing appointment'],
      'Preferred imaging center id': ['not-an-id', '4F8DD2DC-B12B-4D5B-81A9-D8E069295DB6'],
    });
    const answers = await askNewReferral(ctx, ask);
    expect(refusals).toEqual([
      'there is no such date: 1985-02-30',
      'ten digits or more, or empty',
      'a US state or territory: two letters',
      'five letters or digits, e.g. 73721',
      '70551 is not a MRI Knee exam (it is: MRI Brain)',
      'an imaging center id (a UUID), or empty',
    ]);
    const { referral } = referralPayload(answers);
    const mri = fx.mock.data.cpt.find(
      (m) => m.code === '73721' && m.body_part_name === 'Knee' && m.laterality === 'left',
    );
    expect(referral).toMatchObject({
      line_of_business: 'workers_comp',
      payment_type: 'insurance',
      incident_state: 'NV',
      patient: {
        first_name: 'Ada',
        last_name: 'Lovelace',
        date_of_birth_iso: '1985-12-10',
        phone_number: '(702) 555-0100',
      },
      scheduling_mode: 'existing_appointment',
      preferred_location_id: '4f8dd2dc-b12b-4d5b-81a9-d8e069295db6',
    });
    expect(referral.visits).toEqual([
      { modality: 'MRI', procedures: [{ cpt_code_id: mri!.id }] },
      { modality: 'X-Ray', procedures: [{ cpt_code_id: expect.any(String) }] },
    ]);
    expect(referral.icd10_code_ids).toEqual([fx.mock.data.icd10.find((c) => c.code === 'M25.562')!.id]);
    expect(referral).not.toHaveProperty('law_firm_id');
  });
  it('the CPT question gives an example only when it fits the pair (none for an arthrogram of the knee)', async () => {
    const ctx = new Context({
      io: fakeIO().io,
      env: { ...fx.env(), IMAGING_KEYCHAIN: 'off' },
      globals: { cache: false } as GlobalOptions,
    });
    const { ask, asked, refusals } = scripted({
      'Patient first name': ['Ada'],
      'Patient last name': ['Lovelace'],
      'Date of birth': ['12/10/1985'],
      'Phone number': [''],
      Email: [''],
      'Line of business': ['personal injury'],
      'Payment type': ['lien'],
      'Incident state': ['nv'],
      'Exam: modality': ['CT'],
      'Next exam: modality': ['Arthrogram'],
      'Body part': ['Shoulder', 'Knee'],
      'CPT code of the CT Shoulder exam': ['73200'],
      'CPT code of the Arthrogram Knee exam': ['7372', '73722'],
      'Which one': ['left', 'left'],
      'Add another exam?': ['y', 'n'],
      'ICD-10 code': [' => no ICD-10 code'],
      'Law firm': [' => no law firm'],
      'Scheduling mode': ['existing appointment'],
      'Preferred imaging center id': [''],
    });
    await askNewReferral(ctx, ask);
    const cpt = [...new Set(asked.filter((m) => m.startsWith('CPT code')))];
    expect(cpt).toEqual([
      'CPT code of the CT Shoulder exam (e.g. 73200)',
      'CPT code of the Arthrogram Knee exam',
    ]);
    expect(refusals).toEqual(['five letters or digits']);
  });

  it("every pair's example code is a mapping of that pair in the emulator's data", () => {
    for (const [modality, part, code] of cptExamplePairs()) {
      const mapping = fx.mock.data.cpt.find(
        (m) =>
          m.code === code &&
          m.modality_name.toLowerCase() === modality &&
          m.body_part_name.toLowerCase() === part,
      );
      expect(mapping, `${modality} ${part} ${code}`).toBeDefined();
    }
  });
});
