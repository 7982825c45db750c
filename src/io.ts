import type { Readable, Writable } from 'node:stream';
import type { HumanStream } from './output/text.js';

/** What a command may touch of the outside world: streams and whether they are terminals. */
export interface IO {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  stdinIsTTY: boolean;
  /** Terminal width for tables; undefined when stdout is not a terminal. */
  columns: number | undefined;
  /** Terminal width of stderr (notes, hints, the error block are wrapped to it); undefined when not a terminal. */
  errColumns?: number | undefined;
}

export interface Prompter {
  /** Hidden input (a token or a secret). */
  secret(message: string): Promise<string>;
  confirm(message: string): Promise<boolean>;
}

// Data goes to the raw stdout, byte-exact; people's output and notes through the sanitiser.
export interface Sink {
  data: Writable;
  out: HumanStream;
  err: HumanStream;
  color: boolean;
  /** Fit tables to this many cells (stdout is a terminal, no --wide); undefined: every column, nothing cut. */
  width: number | undefined;
  /** Standard output is a terminal: data formats carry nothing it acts on (output/write.ts). */
  tty?: boolean;
  /** CSV: --bom and --no-formula-guard (defaults: no BOM, guarded). */
  csv?: { bom: boolean; formulaGuard: boolean };
}

/** Colour: off with --no-color, NO_COLOR, or when the stream is not a terminal (unless FORCE_COLOR). */
export function colorLevel(
  io: Pick<IO, 'stdoutIsTTY' | 'stderrIsTTY'>,
  env: NodeJS.ProcessEnv,
  noColorFlag: boolean,
  stream: 'stdout' | 'stderr' = 'stdout',
): 0 | 1 {
  if (noColorFlag) return 0;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force === '0' || force === 'false' ? 0 : 1;
  return (stream === 'stdout' ? io.stdoutIsTTY : io.stderrIsTTY) ? 1 : 0;
}
