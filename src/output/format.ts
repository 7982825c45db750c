import { UsageError } from '../errors.js';

export const FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
export type OutputFormat = (typeof FORMATS)[number];

export function parseFormat(value: string): OutputFormat {
  const v = value.trim().toLowerCase();
  if ((FORMATS as readonly string[]).includes(v)) return v as OutputFormat;
  throw new UsageError(`--format: unknown format "${value}"`, `Use one of: ${FORMATS.join(', ')}.`);
}
