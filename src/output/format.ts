import { UsageError } from '../errors.js';

/** Every output format, declared once: `write` (output/write.ts) has exactly one case for each. */
export const FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
export type OutputFormat = (typeof FORMATS)[number];

export function parseFormat(value: string): OutputFormat {
  const v = value.trim().toLowerCase();
  if ((FORMATS as readonly string[]).includes(v)) return v as OutputFormat;
  throw new UsageError(`--format: unknown format "${value}"`, `Use one of: ${FORMATS.join(', ')}.`);
}

/** The default of a switch over FORMATS: a format without its case is a type error here. */
export function assertNever(format: never): never {
  throw new Error(`internal: no case for the format ${String(format)}`);
}
