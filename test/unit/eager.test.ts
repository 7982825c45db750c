import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript
import { markEager } from '../../scripts/eager.mjs';
import { tempDir } from '../helpers.js';

// A file shaped as esbuild writes the bundle: directives, top-level declarations used before the
// line that declares them, module bodies in arrows, a CommonJS wrapper with its own declarations.
const SOURCE = `"use strict";
const early = twice(2);
var body = wrap(() => { total = add(early, 1); });
var total;
function twice(n) { return n * 2; }
function add(a, b) { return a + b; }
async function later(n) { return n + 1; }
function* count() { yield 1; yield 2; }
function wrap(fn) { return () => fn(); }
var lib = ((exports) => { "use strict"; exports.inc = inc; function inc(n) { return n + 1; } return exports; })({});
class Box { value() { return lib.inc(total); } }
body();
later(1).then((n) => {
  const seen = [...count()].map((x) => x * 10);
  process.stdout.write(JSON.stringify({ early, total, n, seen, box: new Box().value(), named: twice.name }));
});
`;

/** `start,end` of the functions V8 compiles lazily in a run of `file` (V8's function log). */
function lazilyCompiled(file: string, log: string) {
  const run = spawnSync(
    process.execPath,
    ['--log-function-events', `--logfile=${log}`, '--no-logfile-per-isolate', file],
    {
      encoding: 'utf8',
    },
  );
  const lines = readFileSync(log, 'utf8').split('\n');
  const id = lines.find((l) => l.startsWith('script-details,') && l.split(',')[2] === file)?.split(',')[1];
  const lazy = lines
    .map((l) => l.split(','))
    .filter(([kind, event, script]) => kind === 'function' && event === 'parse-function' && script === id)
    .map(([, , , start, end]) => `${start},${end}`);
  return { stdout: run.stdout, lazy: new Set(lazy) };
}

describe('the build marks the functions a lookup calls to be compiled with the file', () => {
  it('the marked file does what the file did, and V8 no longer compiles its marked functions lazily', () => {
    const dir = tempDir('imaging-eager-');
    try {
      const plain = join(dir.path, 'plain.cjs');
      const marked = join(dir.path, 'marked.cjs');
      writeFileSync(plain, SOURCE);
      const before = lazilyCompiled(plain, join(dir.path, 'plain.log'));
      const { out, marked: count } = markEager(SOURCE, before.lazy) as { out: string; marked: number };
      writeFileSync(marked, out);
      const after = lazilyCompiled(marked, join(dir.path, 'marked.log'));

      expect(JSON.parse(before.stdout)).toEqual({
        early: 4,
        total: 5,
        n: 2,
        seen: [10, 20],
        box: 6,
        named: 'twice',
      });
      expect(after.stdout).toBe(before.stdout);
      expect(count).toBeGreaterThanOrEqual(10);
      // Left lazy: the class method, which parentheses cannot mark, and on Node 22 and 20 the arrows:
      // their V8 (12.4, 11.3) compiles only `(function` eagerly, Node 24's (13.6) a parenthesised arrow too.
      const arrowsMarked = Number(process.versions.v8.split('.')[0]) >= 13;
      const left = [...after.lazy].map((k) => out.slice(...(k.split(',').map(Number) as [number, number])));
      // The class's implicit constructor is logged with no text.
      const arrows = ['() => fn()', '() => { total = add(early, 1); }', 'ARROW_N', '(x) => x * 10'];
      const expected = ['', '() { return lib.inc(total); }', ...(arrowsMarked ? [] : arrows)];
      expect(left.map((f) => (f.startsWith('(n) =>') ? 'ARROW_N' : f)).sort()).toEqual(expected.sort());
      expect(out.startsWith('"use strict";var twice = (function twice(n)')).toBe(true);
    } finally {
      dir.cleanup();
    }
  });

  it('functions no run called are left as they were', () => {
    const { out, marked } = markEager(SOURCE, new Set()) as { out: string; marked: number };
    expect(out).toBe(SOURCE);
    expect(marked).toBe(0);
  });
});
