import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { displayWidth, renderTable } from '../../src/output/table.js';
import { clean, cleanBlock, HumanStream, joinSafe, SafeText, safe, style } from '../../src/output/text.js';
import { cells } from '../../src/output/wrap.js';
import { ROOT } from '../helpers.js';

const ESC = '\u001b';

describe('clean (one value, one line)', () => {
  it.each([
    ['plain ASCII is unchanged', 'Knee MRI, left', 'Knee MRI, left'],
    ['ESC [ (SGR) shows as a control picture', `a${ESC}[31mb`, 'a\u241b[31mb'],
    ['OSC 52 and BEL', `${ESC}]52;c;aGk=\u0007`, '\u241b]52;c;aGk=\u2407'],
    ['CSI 2J', `${ESC}[2J`, '\u241b[2J'],
    ['C1 CSI', 'a\u009b31m', 'a<U+009B>31m'],
    ['bidi override', '\u202eevil', '<U+202E>evil'],
    ['zero-width space and BOM', '\u200bx\ufeff', '<U+200B>x<U+FEFF>'],
    ['DEL and NUL', 'a\u007fb\u0000', 'a\u2421b\u2400'],
    ['CR, LF and tabs become one space', 'one\r\n\ttwo', 'one two'],
    ['line separator and NEL', 'a\u2028b\u0085c', 'a b c'],
    ['a lone surrogate', 'a\ud800b', 'a<U+D800>b'],
    ['variation selectors (look-alike values)', 'ab\ufe0fc\u{e0100}', 'ab<U+FE0F>c<U+E0100>'],
    [
      'the combining grapheme joiner and Hangul fillers',
      'x\u034fy\u3164\u115f',
      'x<U+034F>y<U+3164><U+115F>',
    ],
    ['tag characters', 'a\u{e0041}', 'a<U+E0041>'],
    ['accents, CJK and emoji are kept', 'Müller 張王李 👍', 'Müller 張王李 👍'],
  ])('%s', (_name, input, expected) => {
    expect(clean(input)).toBe(expected);
  });

  it('is idempotent', () => {
    const hostile = `${ESC}[2J\u009b\u202e\u200b\r\n\u0007`;
    expect(clean(clean(hostile))).toBe(clean(hostile));
  });
});

describe('cleanBlock', () => {
  it('keeps newlines and tabs, escapes the rest', () => {
    expect(cleanBlock(`a\n\tb${ESC}[2J\r\u202e`)).toBe('a\n\tb\u241b[2J\u240d<U+202E>');
  });
});

describe('SafeText', () => {
  it('safe`…` keeps its literal parts and cleans every value to one line', () => {
    const t = safe`Page ${'1\n\u001b[2J'} of ${2}\n`;
    expect(t.text).toBe('Page 1 \u241b[2J of 2\n');
  });

  it('does not clean SafeText twice, and style() adds our own SGR only when colour is on', () => {
    expect(safe`${style('bold', 'A', true)}`.text).toBe(`${ESC}[1mA${ESC}[22m`);
    expect(style('red', `${ESC}[0m`, false).text).toBe('\u241b[0m');
    expect(joinSafe([style('green', 'ok', true), `x${ESC}`], ' ').text).toBe(
      `${ESC}[32mok${ESC}[39m x\u241b`,
    );
  });

  it('cannot be made outside the module', () => {
    expect(
      () => new (SafeText as unknown as new (b: symbol, t: string) => SafeText)(Symbol('SafeText'), 'x'),
    ).toThrow(TypeError);
  });
});

describe('HumanStream', () => {
  const sink = () => {
    let out = '';
    const w = new Writable({
      write(chunk: Buffer, _e, cb) {
        out += chunk.toString();
        cb();
      },
    });
    return { w, text: () => out };
  };

  it('cleans a plain string (a sink that forgot to clean a value cannot pass an escape)', () => {
    const s = sink();
    new HumanStream(s.w).write(`note: ${ESC}]0;title\u0007\n`);
    expect(s.text()).toBe('note: \u241b]0;title\u2407\n');
  });

  it('passes SafeText as it is', () => {
    const s = sink();
    new HumanStream(s.w).line(style('bold', 'A', true));
    expect(s.text()).toBe(`${ESC}[1mA${ESC}[22m\n`);
  });
});

describe('tables with hostile cells', () => {
  it('stay aligned: escapes are counted in the width they take', () => {
    const out = renderTable(
      ['name', 'state'],
      [
        [`a${ESC}[2J\u202e`, 'CA'],
        ['張王李', 'NY'],
      ],
      { color: false, width: undefined },
    ).text;
    const lines = out.trimEnd().split('\n');
    const col = (l: string) => displayWidth(l.slice(0, l.lastIndexOf('  ') + 2));
    expect(new Set(lines.map(col)).size).toBe(1);
  });
});

describe('contract: human output cannot bypass the sanitiser', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    );
  const sources = files(join(ROOT, 'src'))
    .map((f) => ({ file: relative(ROOT, f), text: readFileSync(f, 'utf8') }))
    .filter((s) => !s.file.startsWith('src/emulator/')) // the emulator is the server, not a sink
    // The single executable's launcher, as bin/imaging.cjs (the version line, completion answers, the
    // build's code-cache check), and its keychain helper's one refusal: all our own fixed text.
    .filter((s) => s.file !== 'src/standalone.ts' && s.file !== 'src/config/keychain-child.ts');

  it('nothing writes to a raw stderr: every stderr write goes through HumanStream', () => {
    const raw = sources.filter((s) => /\bstderr\.write\(/.test(s.text)).map((s) => s.file);
    expect(raw).toEqual([]);
  });

  it('raw stdout writes are raw bodies or on a short list of non-server text; JSON goes through the writer', () => {
    // Each entry says why the text is not a server's: a new raw write must be added here, on purpose.
    const allowed: Array<[file: string, statementHolds: string]> = [
      ['src/program.ts', 'stdout.write(fitHelpText(s,'], // commander help and --version: our own text, fitted to the width
      ['src/commands/sso.ts', 'url}\\n`'], // checked by isPortalUrl: one line, no control or format character
      ['src/commands/config/get.ts', 'value}\\n`'], // the user's own stored setting
      ['src/commands/config/path.ts', 'config.path}'],
      ['src/commands/auth/token.ts', 'token}\\n`'], // the user's own token, a valid header value
      ['src/commands/cache/path.ts', 'displayPath(where)}'], // from the user's own IMAGING_CACHE_DIR / HOME
      ['src/commands/mock.ts', 'server.url}'], // our own emulator's address
      ['src/commands/webhook/sign.ts', 'parts.join('], // a curl command from the user's own flags, shell-quoted
      ['src/commands/referrals/get.ts', "write('\\n')"],
      ['src/commands/completion.ts', 'completionScript('], // our own shell script
      ['src/commands/webhook/send.ts', 'rawRequest('], // the request we built (data for verify --request), not a server's
      ['src/commands/referrals/create.ts', 'out.bytes'], // the user's own --file, as read (a dry run)
      ['src/commands/webhook/sample.ts', 'Buffer.concat([body,'], // the event we built, JSON (data for sign), not a server's
      ['src/config/keychain.ts', 'JSON.stringify(answer)'], // the keychain helper's answer to the tool, on a pipe
    ];
    const offenders: string[] = [];
    for (const s of sources) {
      for (const m of s.text.matchAll(/stdout\.write\(/g)) {
        const stmt = s.text.slice(m.index, s.text.indexOf(';', m.index) + 1);
        // A body as the server sent it (`api`, `get --json` piped); JSON the tool makes is writeJson's, which
        // escapes on a terminal what the terminal would act on.
        if (/res\.raw/.test(stmt)) continue;
        if (allowed.some(([file, holds]) => s.file === file && stmt.includes(holds))) continue;
        offenders.push(`${s.file}: ${stmt.slice(0, 80)}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe('one width for every terminal cell count', () => {
  it('East Asian wide letters beyond the BMP count two cells (Tangut, Kana Supplement, Nushu), in tables and prose alike', () => {
    for (const ch of ['\u{17000}', '\u{1B000}', '\u{1B170}', '\u{1F200}', '\uFE10', '\u{20000}', '界', '😀'])
      expect(displayWidth(ch), `U+${ch.codePointAt(0)!.toString(16)}`).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
    const text = `${'\u{1B000}'.repeat(40)} tail`;
    expect(cells(text)).toBe(displayWidth(text));
    expect(cells(`\u001b[1m${text}\u001b[0m`)).toBe(85);
  });
});
