import type { CompletionCommand, CompletionOption, CompletionTable } from './table.js';

// What a TAB press offers, from the table alone (no command is loaded): `words` are the words after the
// program name, the last one being the word under the cursor (possibly empty).
export interface Completion {
  candidates: Array<[value: string, description: string]>;
  files: boolean;
  /** A value of a comma list: the shell adds no space after it, so `,next` can follow. */
  list?: boolean;
}

const NONE: Completion = { candidates: [], files: false };

export function complete(table: CompletionTable, words: readonly string[]): Completion {
  const cur = words.length > 0 ? words[words.length - 1]! : '';
  const before = words.slice(0, -1);
  let group: string | undefined;
  let cmd: CompletionCommand | undefined;
  let pending: CompletionOption | undefined;
  let dashdash = false;
  const used = new Set<string>(); // the first spelling of each option given
  const positional: string[] = [];
  // The globals as this command takes them (--format: its own formats and their description).
  const options = () => [...(cmd?.options ?? []), ...table.globals.map((o) => narrowed(o, cmd))];
  const find = (flag: string) => options().find((o) => o.flags.includes(flag));

  for (const word of before) {
    if (pending) {
      pending = undefined;
      continue;
    }
    if (!dashdash && word === '--') {
      dashdash = true;
      continue;
    }
    if (!dashdash && word.startsWith('-') && word.length > 1) {
      const eq = word.indexOf('=');
      const opt = find(eq > 0 ? word.slice(0, eq) : word);
      if (opt) {
        used.add(opt.flags[0]!);
        if (opt.value && eq < 0) pending = opt;
      }
      continue;
    }
    if (cmd) positional.push(word);
    else if (group) {
      cmd = table.commands.find((c) => c.path.length === 2 && c.path[0] === group && c.path[1] === word);
      if (!cmd) return NONE;
    } else {
      cmd = table.commands.find((c) => c.path.length === 1 && c.path[0] === word);
      if (!cmd) {
        if (!table.commands.some((c) => c.path.length === 2 && c.path[0] === word)) return NONE;
        group = word;
      }
    }
  }

  if (pending) return valuesOf(narrowed(pending, cmd), cur, '');
  if (!dashdash && cur.startsWith('-')) {
    const eq = cur.indexOf('=');
    if (eq > 0) {
      const opt = find(cur.slice(0, eq));
      return opt?.value ? valuesOf(narrowed(opt, cmd), cur.slice(eq + 1), cur.slice(0, eq + 1)) : NONE;
    }
    const out: Array<[string, string]> = [];
    for (const o of options()) {
      if (used.has(o.flags[0]!) && !o.repeatable) continue;
      const long = o.flags.find((f) => f.startsWith('--')) ?? o.flags[0]!;
      // Long names only, as gh does; a short one when that is what is being typed.
      const flag = cur.length === 2 && !cur.startsWith('--') ? o.flags.find((f) => f === cur) : long;
      if (flag?.startsWith(cur)) out.push([flag, o.description]);
    }
    if (!cmd && !group) out.push(['--version', 'print the version']);
    return { candidates: out.filter(([f]) => f.startsWith(cur)), files: false };
  }
  if (!cmd && !group) {
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
    return { candidates: out, files: false };
  }
  if (!cmd) {
    return {
      candidates: table.commands
        .filter((c) => c.path.length === 2 && c.path[0] === group && c.path[1]!.startsWith(cur))
        .map((c) => [c.path[1]!, c.summary]),
      files: false,
    };
  }
  const arg = cmd.args[positional.length];
  if (arg?.values) return { candidates: match(arg.values, cur, ''), files: false };
  return NONE;
}

/** A global option as a command narrows it: --format to its formats (export: csv, ndjson, json), --fields to its fields. */
function narrowed(opt: CompletionOption, cmd: CompletionCommand | undefined): CompletionOption {
  if (cmd?.formats && opt.flags.includes('--format'))
    return { ...opt, values: cmd.formats, description: cmd.formatDescription ?? opt.description };
  if (cmd?.fields && opt.flags.includes('--fields')) return { ...opt, values: cmd.fields, list: true };
  return opt;
}

function valuesOf(opt: CompletionOption, cur: string, prefix: string): Completion {
  if (opt.file) return { candidates: [], files: true };
  if (!opt.values) return NONE;
  if (opt.list) {
    const cut = cur.lastIndexOf(',') + 1;
    const given = new Set(
      cur
        .slice(0, cut)
        .split(',')
        .map((s) => s.trim().toLowerCase()),
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

// The answer as the shell scripts read it: `value<TAB>description` lines, then `:files` if asked, and `:list`
// when the values are items of a comma list (no space after one).
export function formatCompletion(c: Completion): string {
  const lines = c.candidates.map(([v, d]) => (d ? `${v}\t${d.replace(/[\t\r\n]+/g, ' ')}` : v));
  if (c.files) lines.push(':files');
  if (c.list && lines.length) lines.push(':list');
  return lines.length ? `${lines.join('\n')}\n` : '';
}
