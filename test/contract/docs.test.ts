import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_BOOKED } from '../../src/referrals/auto-book.js';
import { COMMANDS } from '../../src/registry.js';
import { ROOT, tempDir } from '../helpers.js';

// docs/commands/*.md and man/imaging.1 are generated from the command definitions by
// scripts/docs.mjs and committed: they must be what the generator writes today, from any folder,
// terminal width or time zone.
const GENERATOR = join(ROOT, 'scripts', 'docs.mjs');
const generated = (dir: string) => [
  ...readdirSync(join(dir, 'docs', 'commands')).map((n) => `docs/commands/${n}`),
  'man/imaging.1',
];

let out: ReturnType<typeof tempDir>;
beforeAll(async () => {
  out = tempDir('imaging-docs-');
  // Elsewhere, narrow and in another time zone: none of it may show in the pages.
  const r = await execa(process.execPath, [GENERATOR, '--out', out.path], {
    cwd: out.path,
    env: { COLUMNS: '40', TZ: 'Pacific/Kiritimati' },
    reject: false,
  });
  expect(r.exitCode, r.stderr).toBe(0);
});
afterAll(() => out?.cleanup());

describe('generated command pages and man page (npm run docs)', () => {
  it('the committed files are the ones the generator writes (run npm run docs if not)', () => {
    const fresh = generated(out.path).sort();
    expect(generated(ROOT).sort(), 'generated files added or removed: run npm run docs').toEqual(fresh);
    const stale = fresh.filter(
      (p) => readFileSync(join(ROOT, p), 'utf8') !== readFileSync(join(out.path, p), 'utf8'),
    );
    expect(stale, 'out of date: run npm run docs and commit the result').toEqual([]);
  });

  it('a page per command, each with its usage line', () => {
    for (const c of COMMANDS) {
      const page = readFileSync(join(out.path, 'docs', 'commands', `${c.path.join('-')}.md`), 'utf8');
      expect(page).toContain(`imaging ${c.path.join(' ')}`);
    }
    const man = readFileSync(join(out.path, 'man', 'imaging.1'), 'utf8');
    for (const c of COMMANDS) expect(man).toContain(`imaging ${c.path.join(' ')}`.replace(/-/g, '\\-'));
  });

  it('README.md lists every command, linked to its page', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const missing = COMMANDS.map((c) => `(docs/commands/${c.path.join('-')}.md)`).filter(
      (l) => !readme.includes(l),
    );
    expect(missing, 'add a line for each to the README command table').toEqual([]);
  });

  it("the README's exit 10 names auto-book's outcomes that end with it", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const row = readme.split('\n').find((l) => l.startsWith('| 10 |'));
    for (const outcome of NOT_BOOKED) expect(row, outcome).toContain(`\`${outcome}\``);
  });

  it('referrals create names where its example payload is: docs/recipes.md, which has it', () => {
    const page = readFileSync(join(ROOT, 'docs', 'commands', 'referrals-create.md'), 'utf8');
    expect(page).toContain('the example payload in docs/recipes.md');
    expect(page).not.toMatch(/README's example/);
    expect(readFileSync(join(ROOT, 'docs', 'recipes.md'), 'utf8')).toContain('<!-- referral.json -->');
  });

  it('every test docs/guarantees.md names as proof exists', () => {
    const text = readFileSync(join(ROOT, 'docs', 'guarantees.md'), 'utf8');
    const named = [...new Set([...text.matchAll(/`(test\/[\w./-]+\.test\.ts)`/g)].map((m) => m[1]!))];
    expect(named.length).toBeGreaterThan(10);
    expect(
      named.filter((p) => !existsSync(join(ROOT, p))),
      'moved or removed: update docs/guarantees.md',
    ).toEqual([]);
  });

  it('hold no machine path', () => {
    for (const p of generated(out.path)) {
      const text = readFileSync(join(out.path, p), 'utf8');
      for (const path of [ROOT, out.path, homedir()]) expect(text, p).not.toContain(path);
    }
  });

  it('--check fails, naming the file out of date and no other', async () => {
    appendFileSync(join(out.path, 'docs', 'commands', 'cpt.md'), 'edited by hand\n');
    const r = await execa(process.execPath, [GENERATOR, '--check', '--out', out.path], { reject: false });
    expect(r.exitCode).toBe(1);
    // Every other file, just written, is found up to date.
    const named = generated(out.path).filter((p) => r.stderr.includes(p));
    expect(named).toEqual(['docs/commands/cpt.md']);
  });

  const groff = spawnSync('groff', ['--version']).status === 0;
  it.skipIf(!groff)('the man page is valid roff (groff -ww warns of nothing; skipped without groff)', () => {
    const r = spawnSync('groff', ['-ww', '-z', '-man', join(ROOT, 'man', 'imaging.1')], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });
});
