import type { CompletionCommand, CompletionOption, CompletionTable } from './table.js';

// What a TAB press offers, from the table alone (no command is loaded): `words` are the words after the
// program name, the last one being the word under the cursor (possibly empty).
interface Completion {
  candidates: Array<[value: string, description: string]>;
  files: boolean;
  /** The shell offers folders only (a folder flag's value). */
  folders?: boolean;
  /** A value of a comma list: the shell adds no space after it, so `,next` can follow. */
  list?: boolean;
}

const NONE: Completion = { candidates: [], files: false };

export function complete(table: CompletionTable, words: readonly string[]): Completion {
  const cur = words.length > 0 ? words[words.length - 1]! : '';
  const state = readWords(table, words.slice(0, -1));
  if (!state) return NONE;
  const { group, cmd, pending, dashdash } = state;
  if (pending) return valuesOf(narrowed(pending, cmd), cur, '');
  if (!dashdash && cur.startsWith('-')) return optionCandidates(table, state, cur);
  if (!cmd && !group) return { candidates: topLevel(table, cur), files: false };
  if (!cmd) {
    return {
      candidates: table.commands
        .filter((c) => c.path.length === 2 && c.path[0] === group && c.path[1]!.startsWith(cur))
        .map((c) => [c.path[1]!, c.summary]),
      files: false,
    };
  }
  const arg = cmd.args[state.positional.length];
  if (arg?.values) return { candidates: match(arg.values, cur, ''), files: false };
  return NONE;
}

interface WordsRead {
  group: string | undefined;
  cmd: CompletionCommand | undefined;
  pending: CompletionOption | undefined;
  dashdash: boolean;
  /** The first spelling of each option given. */
  used: Set<string>;
  positional: string[];
}

/** The globals as this command takes them (--format: its own formats and their description). */
function optionsOf(table: CompletionTable, cmd: CompletionCommand | undefined): CompletionOption[] {
  return [...(cmd?.options ?? []), ...table.globals.map((o) => narrowed(o, cmd))];
}

/** The command, options and arguments the words before the cursor name; undefined for no command. */
function readWords(table: CompletionTable, before: readonly string[]): WordsRead | undefined {
  const state: WordsRead = {
    group: undefined,
    cmd: undefined,
    pending: undefined,
    dashdash: false,
    used: new Set(),
    positional: [],
  };
  for (const word of before) {
    if (state.pending) {
      state.pending = undefined;
      continue;
    }
    if (!state.dashdash && word === '--') {
      state.dashdash = true;
      continue;
    }
    if (!state.dashdash && word.startsWith('-') && word.length > 1) {
      const eq = word.indexOf('=');
      const flag = eq > 0 ? word.slice(0, eq) : word;
      const opt = optionsOf(table, state.cmd).find((o) => o.flags.includes(flag));
      if (opt) {
        state.used.add(opt.flags[0]!);
        if (opt.value && eq < 0) state.pending = opt;
      }
      continue;
    }
    if (state.cmd) state.positional.push(word);
    else if (state.group) {
      const group = state.group;
      state.cmd = table.commands.find(
        (c) => c.path.length === 2 && c.path[0] === group && c.path[1] === word,
      );
      if (!state.cmd) return undefined;
    } else {
      state.cmd = table.commands.find((c) => c.path.length === 1 && c.path[0] === word);
      if (!state.cmd) {
        if (!table.commands.some((c) => c.path.length === 2 && c.path[0] === word)) return undefined;
        state.group = word;
      }
    }
  }
  return state;
}

function optionCandidates(table: CompletionTable, state: WordsRead, cur: string): Completion {
  const { cmd, group, used } = state;
  const options = optionsOf(table, cmd);
  const eq = cur.indexOf('=');
  if (eq > 0) {
    const opt = options.find((o) => o.flags.includes(cur.slice(0, eq)));
    return opt?.value ? valuesOf(narrowed(opt, cmd), cur.slice(eq + 1), cur.slice(0, eq + 1)) : NONE;
  }
  const out: Array<[string, string]> = [];
  for (const o of options) {
    if (used.has(o.flags[0]!) && !o.repeatable) continue;
    if (o.flags.some((f) => cmd?.refuses?.includes(f))) continue;
    const long = o.flags.find((f) => f.startsWith('--')) ?? o.flags[0]!;
    // Long names only, as gh does; a short one when that is what is being typed.
    const flag = cur.length === 2 && !cur.startsWith('--') ? o.flags.find((f) => f === cur) : long;
    if (flag?.startsWith(cur)) out.push([flag, o.description]);
  }
  if (!cmd && !group) out.push(['--version', 'print the version']);
  return { candidates: out.filter(([f]) => f.startsWith(cur)), files: false };
}

/** The commands and groups, each once. */
function topLevel(table: CompletionTable, cur: string): Array<[string, string]> {
  const seen = new Set<string>();
  const out: Array<[string, string]> = [];
  for (const c of table.commands) {
    const name = c.path[0]!;
    if (seen.has(name)) continue;
    seen.add(name);
    const summary =
      c.path.length === 1 ? c.summary : (table.groups.find((g) => g.name === name)?.summary ?? '');
    if (name.startsWith(cur)) out.push([name, summary]);
  }
  return out;
}

/** A global option as a command narrows it: --format to its formats (export: csv, ndjson, json), --fields to its fields. */
function narrowed(opt: CompletionOption, cmd: CompletionCommand | undefined): CompletionOption {
  if (cmd && opt.flags.includes('--format'))
    return {
      ...opt,
      ...(cmd.formats ? { values: cmd.formats } : {}),
      description: cmd.formatDescription ?? opt.description,
    };
  if (cmd?.fields && opt.flags.includes('--fields')) return { ...opt, values: cmd.fields, list: true };
  return opt;
}

function valuesOf(opt: CompletionOption, cur: string, prefix: string): Completion {
  if (opt.file) return { candidates: [], files: true };
  if (opt.folder) return { candidates: [], files: false, folders: true };
  if (!opt.values) return NONE;
  if (opt.list) {
    const cut = cur.lastIndexOf(',') + 1;
    const given = new Set(
      cur
        .slice(0, cut)
        .toLowerCase()
        .split(',')
        .map((s) => s.trim()),
    );
    return {
      list: true,
      candidates: match(
        opt.values.filter((v) => !given.has(v)),
        cur.slice(cut),
        prefix + cur.slice(0, cut),
      ),
      files: false,
    };
  }
  return { candidates: match(opt.values, cur, prefix), files: false };
}

function match(values: readonly string[], cur: string, prefix: string): Array<[string, string]> {
  const c = cur.toLowerCase();
  return values.filter((v) => v.toLowerCase().startsWith(c)).map((v) => [prefix + v, '']);
}

// The answer as the shell scripts read it: `value<TAB>description` lines, then `:files` or `:folders` if asked, and `:list`
// when the values are items of a comma list (no space after one).
export function formatCompletion(c: Completion): string {
  const lines = c.candidates.map(([v, d]) => (d ? `${v}\t${d.replace(/[\t\r\n]+/g, ' ')}` : v));
  if (c.files) lines.push(':files');
  if (c.folders) lines.push(':folders');
  if (c.list && lines.length) lines.push(':list');
  return lines.length ? `${lines.join('\n')}\n` : '';
}
