import { spawnSync } from 'node:child_process';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cli, mockFixture, run } from '../helpers.js';

/**
 * CSV, JSON and NDJSON printed to a real terminal (`script`) from a hostile server carry nothing
 * the terminal acts on: no ESC, no C1 control, no bidi or format character. JSON says the same
 * data through \uXXXX escapes; piped, the bytes are exactly the server's.
 */

const hasScript = spawnSync('script', ['--version']).status === 0;
const skipNote = hasScript ? '' : ' (skipped: needs script(1) for a real terminal)';
/** Any C0 but CR, LF and tab, DEL, C1, a line/paragraph separator, a format character (bidi, zero-width). */
const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/u;

const fx = mockFixture({ hostile: true, referrals: 5 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The CLI with stdout and stderr on a terminal; what the terminal received (once per command line). */
const seen = new Map<string, Promise<string>>();
function onTerminal(args: string[]): Promise<string> {
  const key = JSON.stringify(args);
  if (!seen.has(key)) seen.set(key, runOnTerminal(args));
  return seen.get(key)!;
}
async function runOnTerminal(args: string[]): Promise<string> {
  const cmd = [process.execPath, BIN, ...args].map(quote).join(' ');
  const r = await execa('script', ['-qec', cmd, '/dev/null'], {
    reject: false,
    extendEnv: false,
    env: { ...fx.env(), PATH: process.env.PATH, NO_COLOR: '1', IMAGING_KEYCHAIN: 'off', TERM: 'dumb' },
    timeout: 20_000,
  });
  expect(r.exitCode).toBe(0);
  return String(r.stdout);
}

const found = (text: string) =>
  [...new Set([...text].filter((ch) => FORBIDDEN.test(ch)))].map(
    (ch) => `U+${ch.codePointAt(0)!.toString(16).padStart(4, '0')}`,
  );

describe.skipIf(!hasScript)(`data formats on a terminal, from a hostile server${skipNote}`, () => {
  for (const format of ['csv', 'json', 'ndjson']) {
    it(`referrals list --format ${format}: nothing a terminal acts on`, async () => {
      const text = await onTerminal(['referrals', 'list', '--format', format]);
      expect(text.length).toBeGreaterThan(100);
      expect(found(text)).toEqual([]);
    });
  }

  it('referrals get --json: nothing a terminal acts on', async () => {
    const id = fx.mock.referrals.at(0).id;
    expect(found(await onTerminal(['referrals', 'get', id, '--json']))).toEqual([]);
  });

  it('JSON on a terminal is the same data as piped JSON', async () => {
    // The terminal's output of the ndjson case above (one run of the binary serves both).
    const tty = await onTerminal(['referrals', 'list', '--format', 'ndjson']);
    // Piped, in-process: the same code with its output not a terminal.
    const piped = await cli(false, ['referrals', 'list', '--format', 'ndjson'], { env: fx.env() });
    const parse = (s: string) =>
      s
        .split(/\r?\n/)
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l));
    expect(parse(tty)).toEqual(parse(String(piped.stdout)));
  });

  it('piped, the bytes stay as the server sent them (escapes included)', async () => {
    for (const format of ['csv', 'json']) {
      const piped = await cli(false, ['referrals', 'list', '--format', format], { env: fx.env() });
      expect(piped.exitCode).toBe(0);
      expect(found(String(piped.stdout)).length).toBeGreaterThan(0);
    }
  });
});

describe.skipIf(!hasScript)(`an export on a terminal, from a hostile server${skipNote}`, () => {
  it('referrals export -o /dev/tty: nothing a terminal acts on', async () => {
    const text = await onTerminal(['referrals', 'export', '--format', 'ndjson', '-o', '/dev/tty']);
    expect(text.length).toBeGreaterThan(100);
    expect(found(text)).toEqual([]);
  });

  // In-process: standard output a terminal, through the same pipeline as the binary's.
  it.each(['csv', 'json', 'ndjson'])(
    'referrals export --format %s to a terminal: the same',
    async (format) => {
      const r = await run(['referrals', 'export', '--rows', 'visit', '--format', format], {
        env: fx.env(),
        stdoutIsTTY: true,
        columns: 80,
      });
      expect(r.code).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(100);
      expect(found(r.stdout)).toEqual([]);
    },
  );
});

// In-process (the same writer as the binary's): the commands that answer with one object.
describe('one-object JSON answers on a terminal, from a hostile server', () => {
  const id = () => fx.mock.referrals.at(1).id;
  it.each([
    ['referrals update', () => ['referrals', 'update', id(), '--wc-number', 'WC-7', '--json']],
    [
      'referrals auto-book',
      () => ['referrals', 'auto-book', id(), '--strategy', 'closest', '--radius', '10', '--json'],
    ],
    ['referrals create', () => ['referrals', 'create', '--file', '-', '--json']],
  ])('%s --json: nothing a terminal acts on, and the same data', async (_name, args) => {
    const stdin = JSON.stringify({
      line_of_business: 'personal_injury',
      patient: { first_name: 'A', last_name: 'B' },
    });
    const r = await run(args(), { env: fx.env(), stdoutIsTTY: true, columns: 80, stdin });
    expect(r.code).toBe(0);
    expect(found(r.stdout)).toEqual([]);
    // The hostile server's characters are there, escaped: a parser reads them back.
    expect(JSON.stringify(JSON.parse(r.stdout))).toMatch(/[\u007f-\u009f\u202e]/);
  });
});
