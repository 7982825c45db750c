// Node's compile cache keeps only the code V8 compiles while a file loads; every function a run
// calls after that is compiled again at each start. V8 compiles a function expression in
// parentheses with the code around it, so the functions the lookups call (found by running them
// under V8's function log against the emulator) are put in parentheses, and a function declaration
// they call becomes `var f = (function f() {...});` at the top of its scope, where declarations are
// hoisted to anyway. Class methods cannot be marked: they stay lazy.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';

/** A user's runs: the base URL stored once, then lookups asking the API and then their cache. */
const SETUP = ['--env', 'local', 'config', 'set', 'base-url'];
export const RUNS = [
  ['--env', 'local', '--no-cache', 'cpt', '73721', '--json'],
  ['--env', 'local', '--no-cache', 'icd10', 'knee'],
  ['--env', 'local', 'cpt', '73721', '--json'],
  ['--env', 'local', 'cpt', '73721', '--json'],
];

/** Rewrites `file` (the CLI bundle that `bin` runs) with the functions the lookups call marked eager. */
export async function compileLookupsEagerly(file, bin) {
  const called = await functionsCalled(file, bin);
  const { out, marked } = markEager(
    readFileSync(file, 'utf8'),
    new Set(called.map((f) => `${f.start},${f.end}`)),
  );
  if (marked === 0) throw new Error(`build: no function of ${file} was found in V8's function log`);
  writeFileSync(file, out);
}

/** The functions of `file` that V8 compiled lazily in `runs`, from its function log: `{ start, end }`. */
export async function functionsCalled(file, bin, runs = RUNS) {
  const dir = mkdtempSync(join(tmpdir(), 'imaging-build-'));
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    NODE_DISABLE_COMPILE_CACHE: '1',
  };
  const mock = spawn(process.execPath, [bin, 'mock', '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const run = (flags, args) => {
    const r = spawnSync(process.execPath, [...flags, bin, ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (r.status !== 0) throw new Error(`build: imaging ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  };
  try {
    const url = await new Promise((resolve, reject) => {
      mock.stdout.once('data', (d) => resolve(String(d).trim()));
      mock.once('exit', (code) => reject(new Error(`build: the emulator exited with ${code}`)));
    });
    run([], [...SETUP, url]);
    const log = join(dir, 'v8.log');
    const called = new Map();
    for (const args of runs) {
      rmSync(log, { force: true });
      run(['--log-function-events', `--logfile=${log}`, '--no-logfile-per-isolate'], args);
      const lines = readFileSync(log, 'utf8').split('\n');
      const script = lines
        .find((l) => l.startsWith('script-details,') && l.split(',')[2] === file)
        ?.split(',')[1];
      if (!script) throw new Error(`build: ${file} is not in V8's log of imaging ${args.join(' ')}`);
      for (const l of lines) {
        const [kind, event, id, start, end] = l.split(',');
        if (kind === 'function' && event === 'parse-function' && id === script)
          called.set(`${start},${end}`, { start: Number(start), end: Number(end) });
      }
    }
    return [...called.values()];
  } finally {
    mock.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text with each called function expression in parentheses and each called declaration moved up. */
export function markEager(text, called) {
  const source = ts.createSourceFile('cli.cjs', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  // V8 names a function by where its parameters start and where it ends: the innermost node that fits.
  const byEnd = new Map();
  const collect = (node) => {
    if (ts.isFunctionLike(node) && node.body) byEnd.set(node.end, [...(byEnd.get(node.end) ?? []), node]);
    ts.forEachChild(node, collect);
  };
  collect(source);
  const hot = new Set();
  for (const key of called) {
    const [start, end] = key.split(',').map(Number);
    const fits = (byEnd.get(end) ?? []).filter((n) => n.getStart(source) <= start);
    if (fits.length) hot.add(fits.reduce((a, b) => (b.getStart(source) > a.getStart(source) ? b : a)));
  }
  const inserts = []; // [position, text]
  const moved = new Map(); // scope start → declarations moved to it
  let marked = 0;
  for (const node of hot) {
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
      if (ts.isParenthesizedExpression(node.parent)) continue;
      inserts.push([node.getStart(source), '('], [node.end, ')']);
      marked++;
    } else if (ts.isFunctionDeclaration(node) && node.name && scopeStart(node, source) !== undefined) {
      const at = scopeStart(node, source);
      moved.set(at, [...(moved.get(at) ?? []), node]);
      marked++;
    }
  }
  const movedNodes = new Set([...moved.values()].flat());
  const emit = (from, to, self) => {
    let out = '';
    let at = from;
    const events = [
      ...inserts.filter(([p]) => p >= from && p <= to).map(([p, s]) => ({ p, s })),
      ...[...moved.keys()].filter((p) => p >= from && p < to).map((p) => ({ p, scope: p })),
      ...[...movedNodes]
        .filter((n) => n !== self && n.getStart(source) >= from && n.end <= to)
        .map((n) => ({ p: n.getStart(source), skip: n })),
    ].sort((a, b) => a.p - b.p || (a.s === ')' ? -1 : b.s === ')' ? 1 : 0));
    for (const e of events) {
      if (e.p < at) continue;
      out += text.slice(at, e.p);
      at = e.p;
      if (e.s) out += e.s;
      else if (e.scope !== undefined)
        for (const d of moved.get(e.scope))
          out += `var ${d.name.text} = (${emit(d.getStart(source), d.end, d)});`;
      else at = e.skip.end;
    }
    return out + text.slice(at, to);
  };
  return { out: emit(0, text.length), marked };
}

/** Where a declaration's scope begins after its directives (the file, or a function's body), if it is one. */
function scopeStart(node, source) {
  const parent = node.parent;
  const file = ts.isSourceFile(parent);
  if (!file && !(ts.isBlock(parent) && ts.isFunctionLike(parent.parent))) return undefined;
  const isDirective = (s) => ts.isExpressionStatement(s) && ts.isStringLiteral(s.expression);
  let directives = 0;
  while (directives < parent.statements.length && isDirective(parent.statements[directives])) directives++;
  if (directives > 0) return parent.statements[directives - 1].end;
  return file ? 0 : parent.getStart(source) + 1;
}
