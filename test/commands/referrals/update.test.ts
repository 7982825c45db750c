import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, hasEscapes, onTerminal, piped, plain } from '../../fake-io.js';
import { json, mockFixture, run, tempDir, testServer } from '../../helpers.js';
import '../../reliability.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

const ICD_M5450 = '91419a7c-3875-4b49-84e5-3e049496c7de'; // M54.50 of the emulator's data
const env = (extra: NodeJS.ProcessEnv = {}) => fx.env({ IMAGING_CACHE_DIR: dir.path, ...extra });
const writes = () => fx.apiRequests().filter((q) => q.method !== 'GET');

async function referral(ref: string) {
  const r = await piped(['referrals', 'get', ref, '--json'], { env: env() });
  fx.reset();
  return JSON.parse(r.stdout);
}

describe('imaging referrals update', () => {
  it('changes the fields given and prints what changed, before from a read, after from the answer (both forms)', async () => {
    const before = await referral('R-240002');
    const t = await onTerminal(
      ['referrals', 'update', 'r-240002', '--wc-number', 'WC-77', '--icd10', '+M54.50'],
      {
        env: env(),
      },
    );
    expect(t.code, t.stderr).toBe(0);
    const codes = before.icd10_codes.map((c: { code: string }) => c.code).join(', ');
    expect(plain(t.stdout)).toContain(`Updated referral R-240002 (${before.id}):`);
    expect(plain(t.stdout)).toMatch(
      new RegExp(`icd10_codes +${codes.replace(/\./g, '\\.')} → ${codes}, M54\\.50`),
    );
    expect(plain(t.stdout)).toMatch(new RegExp(`wc_number +${before.wc_number ?? '\\(none\\)'} → WC-77`));
    // The reference is looked up, the code checked, the referral read, then one write.
    expect(fx.apiRequests().map((q) => `${q.method} ${q.path.replace(/\?.*/, '')}`)).toEqual([
      'GET /api/v2/icd10_codes',
      'GET /api/v2/referrals',
      `GET /api/v2/referrals/${before.id}`,
      `PATCH /api/v2/referrals/${before.id}`,
    ]);
    fx.reset();
    const p = await piped(['referrals', 'update', before.id, '--wc-number', 'WC-78'], { env: env() });
    expect(p.code, p.stderr).toBe(0);
    expect(hasEscapes(p.stdout)).toBe(false);
    expect(p.stdout).toBe(`Updated referral R-240002 (${before.id}):\n  wc_number  WC-77 → WC-78\n`);
    expect(p.stderr).toBe('');
    const after = await referral(before.id);
    expect(after.wc_number).toBe('WC-78');
    expect(after.icd10_codes.map((c: { id: string }) => c.id)).toContain(ICD_M5450);
  });

  it('--json gives the changes and the snapshot; -ID removes a code', async () => {
    const before = await referral('R-240003');
    const first = before.icd10_codes[0];
    const r = await piped(
      ['referrals', 'update', 'R-240003', '--icd10', `-${first.id.toUpperCase()}`, '--json'],
      {
        env: env(),
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.id).toBe(before.id);
    expect(out.changes).toEqual([
      { field: 'icd10_codes', before: before.icd10_codes, after: before.icd10_codes.slice(1) },
    ]);
    expect(out.referral.icd10_codes).toEqual(before.icd10_codes.slice(1));
    // Removing it again: it is not on the referral, so nothing is written (exit 2).
    fx.reset();
    const again = await piped(['referrals', 'update', 'R-240003', '--icd10', `-${first.code}`], {
      env: env(),
    });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`--icd10: ${first.code} is not on referral R-240003`);
    expect(writes()).toEqual([]);
  });

  it('--dry-run shows the request and writes nothing (table and JSON)', async () => {
    const before = await referral('R-240004');
    const r = await piped(['referrals', 'update', 'R-240004', '--insurance-number', 'M-1', '--dry-run'], {
      env: env(),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      `PATCH ${fx.mock.url}/api/v2/referrals/${before.id}\n${JSON.stringify({ referral: { insurance_number: 'M-1' } }, null, 2)}\n`,
    );
    expect(r.stderr).toContain('Dry run: nothing was changed');
    const j = await piped(['referrals', 'update', 'R-240004', '--practice', '', '--dry-run', '--json'], {
      env: env(),
    });
    expect(JSON.parse(j.stdout)).toEqual({
      method: 'PATCH',
      url: `${fx.mock.url}/api/v2/referrals/${before.id}`,
      body: { referral: { practice_id: null } },
    });
    expect(writes()).toEqual([]);
    expect((await referral('R-240004')).insurance_number).toBe(before.insurance_number);
  });

  it('a 422 lists the server’s reasons, exit 7', async () => {
    const file = join(dir.path, 'fields.json');
    writeFileSync(file, JSON.stringify({ referral: { colour: 'blue' } }));
    const r = await piped(['referrals', 'update', 'R-240005', '--file', file], { env: env() });
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('status:     422');
    expect(r.stderr).toMatch(/errors:\n\s+- colour cannot be updated/);
  });

  it.for([
    [['--icd10', 'M54.50'], /--icd10: "M54.50" has no \+ or - in front/],
    [['--icd10', '+A,-A'], /--icd10: A is both added and removed/],
    [['--law-firm', 'acme'], /--law-firm needs an id \(a UUID\), not "acme"/],
    [[], /nothing to update/],
  ] as Array<[string[], RegExp]>)('%j is refused before any request (exit 2)', async ([flags, message]) => {
    const r = await piped(['referrals', 'update', 'R-240001', ...flags], { env: env() });
    expectUsageError(r, message, fx.apiRequests().length);
  });

  it('an unknown ICD-10 id or code is refused after its lookup alone, before any write (exit 2)', async () => {
    for (const code of ['+X99.99', '+00000000-0000-4000-8000-000000000000']) {
      fx.reset();
      const r = await piped(['referrals', 'update', 'R-240001', '--icd10', code], {
        env: env({ IMAGING_CACHE_DIR: dir.path }),
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--icd10: no ICD-10 code has the id or code ${code.slice(1)}`);
      expect(fx.apiRequests().map((q) => q.path.replace(/\?.*/, ''))).toEqual(['/api/v2/icd10_codes']);
    }
  });

  it('--icd10 with a sign and no code says the code is missing; without a sign, that the sign is', async () => {
    for (const [given, message] of [
      ['+', /--icd10: "\+" names no code after the \+/],
      ['-', /--icd10: "-" names no code after the -/],
      ['M54.50', /--icd10: "M54.50" has no \+ or - in front/],
    ] as const)
      expectUsageError(
        await piped(['referrals', 'update', 'R-240001', '--icd10', given], { env: env() }),
        message,
        fx.apiRequests().length,
      );
  });

  it('a field given both by a flag and in --file is refused', async () => {
    const r = await piped(['referrals', 'update', 'R-240001', '--wc-number', 'X', '--file', '-'], {
      env: env(),
      stdin: '{"wc_number":"Y"}',
    });
    expectUsageError(r, /wc_number given both in standard input and by a flag/, fx.apiRequests().length);
  });

  it('in production: refused without a terminal or --yes, asked on one, sent with --yes', async () => {
    const prod = {
      IMAGING_ENV: 'production',
      IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
      IMAGING_TOKEN: 'mock-prod',
      IMAGING_CONFIG_DIR: dir.path,
    };
    const argv = ['referrals', 'update', 'R-240006', '--wc-number', 'WC-P'];
    const refused = await piped(argv, { env: prod });
    expectUsageError(
      refused,
      /updating a referral in production needs confirmation/,
      fx.apiRequests().length,
    );
    expect(refused.stderr).toContain('--yes');
    const asked: string[] = [];
    const declined = await run(argv, {
      env: prod,
      stdinIsTTY: true,
      deps: {
        prompter: {
          secret: async () => '',
          confirm: async (q) => {
            asked.push(q);
            return false;
          },
        },
      },
    });
    expect(declined.code).toBe(1);
    expect(asked[0]).toMatch(/^Update referral R-240006 in PRODUCTION \(http:\/\/localhost:\d+\)\?$/);
    expect(declined.stderr).toContain('"wc_number": "WC-P"');
    expect(declined.stderr).toContain('Nothing was sent.');
    expect(writes()).toEqual([]);
    const yes = await piped([...argv, '--yes'], { env: prod });
    expect(yes.code, yes.stderr).toBe(0);
    expect(writes()).toHaveLength(1);
  });
});

describe('referrals update: messages that agree with what happened', () => {
  it("--insurance-number '' on a referral without one is no change (not (none) → (none))", async () => {
    const list = await piped(['referrals', 'list', '--per-page', '100', '--json'], { env: env() });
    const bare = (JSON.parse(list.stdout) as Array<Record<string, unknown>>).find(
      (r) => !('insurance_number' in r) || r.insurance_number === null,
    );
    expect(bare).toBeDefined();
    fx.reset();
    const r = await piped(['referrals', 'update', String(bare!.reference), '--insurance-number', ''], {
      env: env(),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      `Nothing changed on referral ${bare!.reference} (${bare!.id}): it already had these values.\n`,
    );
    expect(r.stderr).not.toContain('warning');
  });

  it('a field the server ignores: stdout does not say it already had the value', async () => {
    const before = await referral('R-240007');
    const server = await testServer((_req, res) => json(res, 200, before));
    try {
      const r = await piped(['referrals', 'update', String(before.id), '--wc-number', 'WC-NEW-1'], {
        env: env({ IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path }),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(
        `Nothing changed on referral ${before.reference} (${before.id}): the server returned it as it was.\n`,
      );
      expect(r.stderr).toContain(
        'warning: wc_number was sent, but the referral the server returned shows wc_number as before.',
      );
    } finally {
      await server.close();
    }
  });

  it('removing a code the referral lacks: the hint names the referral by its reference, and the example codes exist', async () => {
    const r = await piped(['referrals', 'update', 'R-240002', '--icd10', '-M54.2'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'hint: Nothing was changed. Its codes are listed by: imaging referrals get R-240002 --fields icd10_codes',
    );
    const bad = await piped(['referrals', 'update', 'R-240002', '--icd10', 'M54.50'], { env: env() });
    const example = /e\.g\. --icd10 (\S+)/.exec(bad.stderr)?.[1];
    expect(example, bad.stderr).toBeDefined();
    for (const code of example!.split(',').map((c) => c.slice(1))) {
      const found = await piped(['icd10', code, '--json'], { env: env() });
      expect(
        JSON.parse(found.stdout).map((c: { code: string }) => c.code),
        code,
      ).toContain(code);
    }
  });
});

describe("production by address: a sandbox whose base URL is production's", () => {
  it('update and auto-book need --yes, sandbox tools are refused', async () => {
    // The production base URL stored, then the same server named as the sandbox's (a trailing slash aside).
    const set = await run(['config', 'set', 'base-url', fx.mock.url, '--env', 'production'], {
      env: { IMAGING_CONFIG_DIR: dir.path },
    });
    expect(set.code, set.stderr).toBe(0);
    const sandbox = {
      IMAGING_ENV: 'sandbox',
      IMAGING_TOKEN: 'mock-prod',
      IMAGING_CONFIG_DIR: dir.path,
      IMAGING_CACHE_DIR: dir.path,
    };
    const as = (argv: string[]) => piped(['--base-url', `${fx.mock.url}/`, ...argv], { env: sandbox });
    expectUsageError(
      await as(['referrals', 'update', 'R-240006', '--wc-number', 'WC-P']),
      /updating a referral in production needs confirmation/,
      fx.apiRequests().length,
    );
    expectUsageError(
      await as(['referrals', 'auto-book', 'R-240006', '--strategy', 'closest', '--radius', '5']),
      /an auto-book request in production needs confirmation/,
      fx.apiRequests().length,
    );
    expectUsageError(
      await as(['sandbox', 'fixture', 'booked']),
      /the sandbox base URL .* is production's; refused/,
      fx.apiRequests().length,
    );
    // Other spellings of the same server: this machine by another name, a host's trailing dot.
    const { port } = new URL(fx.mock.url);
    for (const other of [
      `http://localhost:${port}`,
      `http://127.0.0.1.:${port}/`,
      `HTTP://127.0.0.1:${port}/./`,
    ]) {
      expectUsageError(
        await piped(['--base-url', other, 'sandbox', 'fixture', 'booked'], { env: sandbox }),
        /the sandbox base URL .* is production's; refused/,
        fx.apiRequests().length,
      );
    }
  });

  it('a dry run in production without a terminal needs no --yes: it sends no write', async () => {
    const prod = {
      IMAGING_ENV: 'production',
      IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
      IMAGING_TOKEN: 'mock-prod',
      IMAGING_CONFIG_DIR: dir.path,
      IMAGING_CACHE_DIR: dir.path,
    };
    const dry = await piped(['referrals', 'update', 'R-240006', '--wc-number', 'WC-P', '--dry-run'], {
      env: prod,
    });
    expect(dry.code, dry.stderr).toBe(0);
    const dryBook = await piped(
      ['referrals', 'auto-book', 'R-240006', '--strategy', 'closest', '--radius', '5', '--dry-run'],
      { env: prod },
    );
    expect(dryBook.code, dryBook.stderr).toBe(0);
    expect(writes()).toEqual([]);
  });
});

describe('referrals update against a second real server', () => {
  let snapshot: Record<string, unknown>;
  beforeAll(async () => {
    snapshot = await referral('R-240007');
  });

  it('goes to path.referral_update with its method, carrying exactly the fields given', async () => {
    const id = snapshot.id as string;
    const server = await testServer((req, res, body) => {
      if (req.method === 'GET') return json(res, 200, snapshot);
      const fields = JSON.parse(body.toString()).referral;
      return json(res, 200, {
        referral: {
          ...snapshot,
          wc_number: fields.wc_number,
          law_firm: { id: fields.law_firm_id, name: 'Acme LLP' },
        },
      });
    });
    try {
      const local = env({ IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path });
      const s = await piped(
        ['config', 'set', 'path.referral_update', 'PUT /api/v2/partner/referrals/{id}/edit'],
        { env: local },
      );
      expect(s.code, s.stderr).toBe(0);
      const firm = 'e00bbeb8-17b4-4d35-8a04-133f454cc24c';
      const r = await piped(
        ['referrals', 'update', id, '--wc-number', 'WC-S', '--law-firm', firm.toUpperCase()],
        { env: local },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(server.seen.map((q) => [q.method, q.url, q.body])).toEqual([
        ['GET', `/api/v2/referrals/${id}`, ''],
        [
          'PUT',
          `/api/v2/partner/referrals/${id}/edit`,
          JSON.stringify({ referral: { wc_number: 'WC-S', law_firm_id: firm } }),
        ],
      ]);
      expect(server.seen[1]!.headers['content-type']).toBe('application/json');
      expect(r.stdout).toContain(`law_firm   (none) → Acme LLP (${firm})`);
    } finally {
      await server.close();
    }
  });

  it('an update answered with no snapshot (204): the referral is read again to show what changed', async () => {
    const id = snapshot.id as string;
    let updated = false;
    const server = await testServer((req, res) => {
      if (req.method === 'GET')
        return json(res, 200, updated ? { ...snapshot, insurance_number: 'IN-9' } : snapshot);
      updated = true;
      res.writeHead(204);
      res.end();
    });
    try {
      const r = await piped(['referrals', 'update', id, '--insurance-number', 'IN-9'], {
        env: env({ IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path }),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        'The update answered without the referral: reading it again to show what changed.',
      );
      expect(r.stdout).toContain(`insurance_number  ${snapshot.insurance_number ?? '(none)'} → IN-9`);
      expect(server.seen.map((q) => q.method)).toEqual(['GET', 'PATCH', 'GET']);
    } finally {
      await server.close();
    }
  });

  it("the server's text in the change list goes through the sanitiser", async () => {
    const id = snapshot.id as string;
    const server = await testServer((req, res) =>
      json(
        res,
        200,
        req.method === 'GET' ? snapshot : { ...snapshot, wc_number: 'WC\u001b]0;pwned\u0007\u202e-1' },
      ),
    );
    try {
      const r = await onTerminal(['referrals', 'update', id, '--wc-number', 'WC-1'], {
        env: env({ IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path }),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).not.toMatch(/[\u0007\u202e]|\u001b\]/);
      expect(r.stdout).toContain('WC␛]0;pwned␇<U+202E>-1');
    } finally {
      await server.close();
    }
  });

  it.for([404, 405])(
    'a %i with the stored default environment elsewhere: the hint names --env, and a 404 blames the path (the referral was just read)',
    async (status) => {
      const id = snapshot.id as string;
      const server = await testServer((req, res) =>
        req.method === 'GET' ? json(res, 200, snapshot) : json(res, status, { error: 'Nope' }),
      );
      try {
        const base = { IMAGING_CONFIG_DIR: dir.path, IMAGING_CACHE_DIR: dir.path };
        expect((await run(['config', 'set', 'env', 'production'], { env: base })).code).toBe(0);
        const r = await run(['--env', 'sandbox', 'referrals', 'update', id, '--wc-number', 'X'], {
          env: { ...base, IMAGING_BASE_URL: server.url, IMAGING_TOKEN: 'sandbox-token' },
        });
        expect(r.code, r.stderr).toBe(status === 404 ? 4 : 1);
        expect(r.stderr).toContain(
          "set it with: imaging config set path.referral_update 'PATCH /api/v2/…/{id}/…' --env sandbox\n",
        );
        if (status === 404)
          expect(r.stderr).toContain(
            `hint: Referral ${snapshot.reference} was read just before, so the path is likely wrong: the path of the referral update is not published`,
          );
        expect(r.stderr).not.toContain('there is no referral');
      } finally {
        await server.close();
      }
    },
  );

  it('a 404 or 405 from the default path names the key to set', async () => {
    const id = snapshot.id as string;
    const server = await testServer((req, res) =>
      req.method === 'GET' ? json(res, 200, snapshot) : json(res, 405, { error: 'Method Not Allowed' }),
    );
    try {
      const r = await piped(['referrals', 'update', id, '--wc-number', 'X'], {
        env: env({ IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path }),
      });
      expect(r.code).toBe(1); // a 405 is "anything unexpected", not a refusal of the fields (7)
      expect(r.stderr).toContain(
        "hint: The path of the referral update is not published (the default, PATCH /api/v2/referrals/{id}, is a guess); set it with: imaging config set path.referral_update 'PATCH /api/v2/…/{id}/…' --env local",
      );
    } finally {
      await server.close();
    }
  });
});
