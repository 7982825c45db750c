import { UsageError } from '../errors.js';

/** Every output format, declared once: `write` (output/write.ts) has exactly one case for each. */
export const FORMATS = ['table', 'json', 'ndjson', 'csv', 'xlsx'] as const;
export type OutputFormat = (typeof FORMATS)[number];

/** What a command takes when its definition names no `formats`: an Excel workbook only where named. */
export const DEFAULT_FORMATS: readonly OutputFormat[] = FORMATS.filter((f) => f !== 'xlsx');

export function parseFormat(value: string): OutputFormat {
  const v = value.trim().toLowerCase();
  if ((FORMATS as readonly string[]).includes(v)) return v as OutputFormat;
  throw new UsageError(`--format: unknown format "${value}"`, `Use one of: ${FORMATS.join(', ')}.`);
}

/** The default of a switch over FORMATS: a format without its case is a type error here. */
export function assertNever(format: never): never {
  throw new Error(`internal: no case for the format ${String(format)}`);
}

/** The hint for a workbook meant for a terminal, naming a file that fits what is listed. */
export const redirectHint = (file: string): string =>
  `Redirect it to a file (… --format xlsx > ${file}), or use --format csv to read it here.`;

/** A workbook is binary: never written to a terminal (checked before any request). */
export function refuseTerminal(
  format: OutputFormat,
  stdoutIsTTY: boolean,
  hint = redirectHint('referrals.xlsx'),
): void {
  if (format === 'xlsx' && stdoutIsTTY)
    throw new UsageError('--format xlsx writes an Excel workbook, which a terminal cannot show', hint);
}
