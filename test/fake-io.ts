import { expect } from 'vitest';
import { type RunOptions, type RunResult, run } from './helpers.js';

/** A person at an 80-column terminal: stdout and stderr are terminals, colour is on. */
export const TERMINAL = { stdoutIsTTY: true, stderrIsTTY: true, columns: 80 } as const;
/** A pipe or a file: no terminal anywhere. */
export const PIPED = { stdoutIsTTY: false, stderrIsTTY: false } as const;

export interface Forms {
  terminal: RunResult;
  piped: RunResult;
}

/** Runs one command in-process twice, once as a person sees it and once as a script does. */
export async function bothForms(argv: string[], opts: RunOptions = {}): Promise<Forms> {
  const terminal = await run(argv, { ...opts, ...TERMINAL });
  const piped = await run(argv, { ...opts, ...PIPED });
  return { terminal, piped };
}

/** Runs one command as a person at an 80-column terminal sees it. */
export function onTerminal(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
  return run(argv, { ...opts, ...TERMINAL });
}

/** Runs one command with its output going to a pipe. */
export function piped(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
  return run(argv, { ...opts, ...PIPED });
}

const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** The text without colour or cursor escapes. */
export const plain = (text: string): string => text.replace(ANSI, '');

/** Whether the text has any terminal escape. */
export const hasEscapes = (text: string): boolean => text.includes('\u001b');

/** The widest line as a person sees it (escapes removed). */
export const widest = (text: string): number =>
  plain(text)
    .split('\n')
    .reduce((most, line) => Math.max(most, [...line].length), 0);

/** The lines of a command's output, without the final line break. */
export const lines = (text: string): string[] => text.replace(/\n$/, '').split('\n');

/**
 * The usage error every command gives before it sends anything: exit 2, nothing on stdout, the
 * one error block on stderr (no stack trace), and no request made.
 */
export function expectUsageError(r: RunResult, message: RegExp, requestsSeen: number): void {
  expect(r.stderr).toMatch(message);
  expect(r.stderr).toMatch(/^(\u001b\[[0-9;]*m)*error:/);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).toBe('');
  expect(r.code).toBe(2);
  expect(requestsSeen).toBe(0);
}

/**
 * A table in both forms. On the terminal: bold headers, no line wider than 80 columns, the first
 * word of every row's key shown. Piped: no escapes anywhere, exactly `headers` as the first line and one line
 * per row, in order, each starting with its key.
 */
export function expectTableForms(forms: Forms, headers: readonly string[], keys: readonly string[]): void {
  const { terminal, piped: p } = forms;
  expect(terminal.code).toBe(0);
  expect(terminal.stdout).toContain('\u001b[1m');
  expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
  const seen = plain(terminal.stdout);
  // A long key may wrap onto the next line at a space or hyphen: its first word is on the row.
  for (const key of keys) expect(seen).toContain(key.split(/[\s-]/)[0]);
  expect(p.code).toBe(0);
  expect(hasEscapes(p.stdout) || hasEscapes(p.stderr)).toBe(false);
  const rows = lines(p.stdout);
  expect(rows[0]!.trim().split(/ {2,}/)).toEqual(headers);
  expect(rows.slice(1).map((row) => row.trim().split(/ {2,}/)[0])).toEqual(keys);
}
