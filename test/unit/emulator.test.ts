import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_TOKEN } from '../../src/config/environments.js';
import { MOCK_TOKENS, type MockServer, startMockServer } from '../../src/emulator/server.js';
import { ROOT } from '../helpers.js';

// Product code reaches the emulator only through the `mock` command (architecture.md): the
// emulator is a test and demo tool, and nothing the CLI does for a real API may depend on it.

/** Where the mock command may live once commands are one file each (commands/mock.ts or a folder). */
const MOCK_COMMAND = /^src\/commands\/(?:[^/]+\/)?mock(?:\.ts|\/[^/]+\.ts)$/;

/** Every module specifier a file names: static imports, re-exports, side-effect and dynamic imports. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]!);
  return out;
}

const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

/** `file -> specifier` for every import under root/src that lands in root/src/emulator/. */
function emulatorImports(root: string): Array<{ file: string; specifier: string }> {
  const emulator = join(root, 'src', 'emulator') + sep;
  const found: Array<{ file: string; specifier: string }> = [];
  for (const path of tsFiles(join(root, 'src'))) {
    const file = relative(root, path).split(sep).join('/');
    if (file.startsWith('src/emulator/')) continue;
    for (const specifier of specifiers(readFileSync(path, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = resolve(dirname(path), specifier);
      if (`${target}${sep}`.startsWith(emulator) || target.startsWith(emulator))
        found.push({ file, specifier });
    }
  }
  return found;
}

describe('the emulator is reached only through the mock command', () => {
  it('no file under src/ other than the mock command imports src/emulator/', () => {
    const found = emulatorImports(ROOT);
    expect(found.filter((f) => !MOCK_COMMAND.test(f.file))).toEqual([]);
    // The walk sees the one import that is allowed, so it is looking at the right files.
    expect(found.some((f) => MOCK_COMMAND.test(f.file))).toBe(true);
  });

  it('the walk catches every form of import from outside the emulator (a source tree of its own)', () => {
    const root = mkdtempSync(join(tmpdir(), 'imaging-emu-layout-'));
    try {
      const write = (file: string, text: string) => {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        writeFileSync(join(root, file), text);
      };
      write('src/emulator/server.ts', "import { x } from '../api/types.js';\n");
      write('src/emulator/routes/a.ts', "import { y } from '../server.js';\n");
      write('src/commands/mock.ts', "import { startMockServer } from '../emulator/server.js';\n");
      write('src/api/static.ts', "import { a } from '../emulator/server.js';\n");
      write('src/api/typeonly.ts', "import type {\n  MockOptions,\n} from '../emulator/types.js';\n");
      write('src/util/reexport.ts', "export * from '../emulator/faults.js';\n");
      write('src/util/dynamic.ts', "const m = await import('../emulator/hostile.js');\n");
      write('src/util/bare.ts', "import '../emulator';\n");
      write('src/util/fine.ts', "import { b } from './emulator-free.js';\nimport 'node:http';\n");
      const bad = emulatorImports(root)
        .filter((f) => !MOCK_COMMAND.test(f.file))
        .map((f) => f.file)
        .sort();
      expect(bad).toEqual([
        'src/api/static.ts',
        'src/api/typeonly.ts',
        'src/util/bare.ts',
        'src/util/dynamic.ts',
        'src/util/reexport.ts',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('the valid mock token is the local environment default, defined once', () => {
    expect(MOCK_TOKENS.valid).toBe(MOCK_TOKEN);
    const literal = tsFiles(join(ROOT, 'src'))
      .filter((f) => readFileSync(f, 'utf8').includes(`'${MOCK_TOKEN}'`))
      .map((f) => relative(ROOT, f).split(sep).join('/'));
    expect(literal).toEqual(['src/config/environments.ts']);
  });
});

/**
 * The spec's documented endpoints (its "Endpoints" section, the defined ones and those it names
 * without shapes). The CLI uses every one of them: the lookups, law firms, referrals and sso as
 * commands, POST /api/v2/patients through `imaging api`. Kept here so the test runs without the
 * spec; checked against the spec wherever the spec is found (../shared/spec from the checkout).
 */
const DOCUMENTED = [
  'POST /api/v2/auth/sso',
  'GET /api/v2/body_parts',
  'GET /api/v2/cpt_codes',
  'GET /api/v2/icd10_codes',
  'POST /api/v2/law_firms',
  'GET /api/v2/law_firms',
  'GET /api/v2/modalities',
  'POST /api/v2/patients',
  'POST /api/v2/referrals',
  'GET /api/v2/referrals',
  'GET /api/v2/referrals/{id}',
];

function findSpec(): string | undefined {
  for (let dir = ROOT; ; dir = dirname(dir)) {
    const path = join(dir, 'shared', 'spec', 'partner-imaging-referral-api-v2.md');
    if (existsSync(path)) return path;
    if (dirname(dir) === dir) return undefined;
  }
}

describe('the emulator serves every endpoint the spec documents', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ referrals: 5 });
  });
  afterAll(() => mock.close());

  const spec = findSpec();
  it.runIf(spec !== undefined)("the list above is the spec's own (its Endpoints section)", () => {
    const text = readFileSync(spec!, 'utf8');
    const section = text.slice(text.indexOf('\n## Endpoints'), text.indexOf('\n## Authentication'));
    const named = [...section.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/api\/v2\/[A-Za-z0-9_/{}]+)/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(new Set(named)).toEqual(new Set(DOCUMENTED));
  });

  it.each(DOCUMENTED)('%s is routed (not "No route matches")', async (endpoint) => {
    const [method, pattern] = endpoint.split(' ') as [string, string];
    const path = pattern.replace('{id}', encodeURIComponent(mock.referrals.at(0).id));
    const res = await fetch(mock.url + path, {
      method,
      headers: { authorization: `Bearer ${MOCK_TOKENS.valid}`, 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    const body = (await res.json()) as { code?: string; message?: string };
    expect(body.message ?? '').not.toMatch(/^No route matches/);
    expect(res.status).not.toBe(404);
    expect(res.status).toBeLessThan(500);
  });
});

describe("the emulator's data is the same on every run", () => {
  it('its ids: the first ones drawn from seed 1, as every earlier build drew them', async () => {
    const { rng, uuidFrom } = await import('../../src/emulator/data/random.js');
    const rand = rng(1);
    expect([uuidFrom(rand), uuidFrom(rand), uuidFrom(rand)]).toEqual([
      'a08ff49b-6f77-4632-b16c-43069c43a8c3',
      'b7cf3c25-632b-4240-9d3f-b64afebede10',
      'd4e8eb2a-f2f2-4165-a881-cd424e42a851',
    ]);
    for (let i = 0; i < 1000; i++)
      expect(uuidFrom(rand)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('the emulator builds each generated referral once', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await startMockServer({ port: 0, referrals: 50 });
  });
  afterAll(() => mock.close());

  it('a filtered list reads the referrals it built before; a change replaces one, as served', async () => {
    const first = mock.referrals.at(7);
    const list = async (query: string) => {
      const res = await fetch(`${mock.url}/api/v2/referrals?${query}`, {
        headers: { authorization: `Bearer ${MOCK_TOKEN}` },
      });
      return ((await res.json()) as { referrals: Array<{ id: string; status: string }> }).referrals;
    };
    const before = await list(`status=${first.status}&per_page=100`);
    // The same object: a search over every referral costs no build the second time.
    expect(mock.referrals.at(7)).toBe(first);
    expect(before.map((r) => r.id)).toContain(first.id);
    const changed = { ...structuredClone(first), status: first.status === 'closed' ? 'pending' : 'closed' };
    mock.referrals.put(changed);
    expect(mock.referrals.at(7).status).toBe(changed.status);
    expect((await list(`status=${changed.status}&per_page=100`)).map((r) => r.id)).toContain(first.id);
    expect((await list(`status=${first.status}&per_page=100`)).map((r) => r.id)).not.toContain(first.id);
  });
});

describe('a stopped emulator keeps none of the referrals it built', () => {
  it('after close, a read builds the referral again (the test files of a run outlive their emulators)', async () => {
    const m = await startMockServer({ port: 0, referrals: 20 });
    const kept = m.referrals.at(3);
    expect(m.referrals.at(3)).toBe(kept);
    await m.close();
    const again = m.referrals.at(3);
    expect(again).not.toBe(kept);
    expect(again.id).toBe(kept.id);
  });
});
