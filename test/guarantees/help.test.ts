import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS, GROUPS } from '../../src/registry.js';
import { ROOT, run, tempDir } from '../helpers.js';

// Help wraps to the terminal, `help A B` shows the verb's help, and the last lines
// point to documentation that exists where the tool is installed.

const every = [[], ...GROUPS.map((g) => [g.name]), ...COMMANDS.map((c) => [...c.path])];

/** A help's text, run once per command and width: the tests below each read other parts of it. */
const helps = new Map<string, ReturnType<typeof run>>();
const help = (words: string[], opts: { columns?: number } = {}) => {
  const key = JSON.stringify([words, opts.columns]);
  if (!helps.has(key))
    helps.set(
      key,
      run([...words, '--help'], opts.columns ? { stdoutIsTTY: true, columns: opts.columns } : {}),
    );
  return helps.get(key)!;
};

describe('imaging help A B', () => {
  it.each(COMMANDS.map((c) => [c.path.join(' ')]))('help %s is the same as its --help', async (path) => {
    const words = path.split(' ');
    const viaHelp = await run(['help', ...words]);
    const viaFlag = await help(words);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    expect(viaHelp.stdout).toContain(`Usage: imaging ${path} `);
  });

  it('help of a group, of an unknown command or verb, and of a top-level command with an argument', async () => {
    expect((await run(['help', 'referrals'])).stdout).toContain(
      'Usage: imaging referrals [options] [command]',
    );
    const unknown = await run(['help', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'nope'");
    const badVerb = await run(['help', 'referrals', 'gte']);
    expect(badVerb.code).toBe(2);
    expect(badVerb.stderr).toContain("unknown command 'gte'");
    const cpt = await run(['help', 'cpt', '73721']);
    expect(cpt.code).toBe(0);
    expect(cpt.stdout).toContain('Usage: imaging cpt [options] <code>');
  });
});

describe('the docs pointer exists where the tool is installed', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeAll(() => {
    dir = tempDir();
  });
  afterAll(() => dir.cleanup());

  /** What npm installs (package.json `files`, plus README.md, which npm always ships), run through a bin symlink. */
  function install(name: string, withReadme: boolean): string {
    const pkg = join(dir.path, name, 'node_modules', 'partner-imaging-cli');
    mkdirSync(pkg, { recursive: true });
    for (const f of ['bin', 'dist', 'package.json']) cpSync(join(ROOT, f), join(pkg, f), { recursive: true });
    if (withReadme) cpSync(join(ROOT, 'README.md'), join(pkg, 'README.md'));
    const binDir = join(dir.path, name, 'bin');
    mkdirSync(binDir);
    symlinkSync(join(pkg, 'bin', 'imaging.cjs'), join(binDir, 'imaging'));
    return binDir;
  }

  it("--format in each command's help lists the formats that command takes (export: csv, ndjson, json)", async () => {
    for (const entry of COMMANDS) {
      const def = (await entry.load()).default;
      const r = await help([...entry.path], { columns: 200 });
      const line = r.stdout.split('\n').find((l) => l.trimStart().startsWith('--format <format>'));
      expect(line?.replace(/^\s*--format <format>\s+/, ''), entry.path.join(' ')).toBe(
        `output format: ${(def.formats ?? ['table', 'json', 'ndjson', 'csv']).join(', ')}`,
      );
    }
    const root = await help([], { columns: 200 });
    // The root lists every format of FORMATS, xlsx said to be for the commands that take it.
    expect(root.stdout).toMatch(
      /--format <format> +output format: table, json, ndjson, csv; xlsx where a command takes it \(see\s+its --help\)\n/,
    );
  });

  it("a command's help offers --json and --fields only where they are taken (watch: neither; download: both)", async () => {
    for (const entry of COMMANDS) {
      const def = (await entry.load()).default;
      const r = await help([...entry.path], { columns: 200 });
      const lists = (flag: string) => r.stdout.split('\n').some((l) => l.trimStart().startsWith(`${flag} `));
      const path = entry.path.join(' ');
      expect(lists('--json'), path).toBe((def.formats ?? ['json']).includes('json'));
      expect(lists('--fields'), path).toBe(def.fields !== undefined);
    }
  });

  it('mock --help says where files are served (the storage origin, expired links) and reads --fault itself', async () => {
    const r = await help(['mock'], { columns: 200 });
    expect(r.stdout).toMatch(/second "storage" origin/);
    expect(r.stdout).toMatch(/already expired \(an expired link answers an HTML page/);
    expect(r.stdout).toMatch(
      /--fault <mode\[:count\]\[@after\]> +inject a fault: let AFTER API requests through/,
    );
    // The README does not describe --fault: the help does not send the reader there.
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).not.toContain('--fault');
    expect(r.stdout).not.toMatch(/see README/i);
  });

  it('every help (root, groups, commands) ends with the pointer', async () => {
    for (const words of every) {
      const r = await help(words);
      expect(r.stdout.trimEnd().split('\n').at(-1), `imaging ${words.join(' ')} --help`).toBe(
        'One command in full: imaging help COMMAND [VERB]',
      );
    }
  });

  it('names the installed README.md by its full path, which exists', async () => {
    const binDir = install('with-readme', true);
    const r = await execa(join(binDir, 'imaging'), ['help', 'cpt'], {
      cwd: dir.path,
      env: { IMAGING_CACHE_DIR: join(dir.path, 'cache') },
      reject: false,
    });
    expect(r.exitCode).toBe(0);
    const docs = /^Docs: (.+)$/m.exec(r.stdout)?.[1];
    expect(docs).toBe(join(dir.path, 'with-readme', 'node_modules', 'partner-imaging-cli', 'README.md'));
    expect(existsSync(docs!)).toBe(true);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('One command in full: imaging help COMMAND [VERB]');
  });

  it('without a README beside it, points only to imaging help', async () => {
    const binDir = install('without-readme', false);
    const r = await execa(join(binDir, 'imaging'), ['--help'], {
      cwd: dir.path,
      env: { IMAGING_CACHE_DIR: join(dir.path, 'cache') },
      reject: false,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain('Docs:');
    expect(r.stdout).not.toContain('README');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('One command in full: imaging help COMMAND [VERB]');
    rmSync(join(dir.path, 'without-readme'), { recursive: true });
  });
});
