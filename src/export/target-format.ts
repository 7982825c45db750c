import { extname } from 'node:path';
import type { ExportFormat } from './pipeline.js';

const BY_EXTENSION = new Map<string, ExportFormat>([
  ['.csv', 'csv'],
  ['.json', 'json'],
  ['.ndjson', 'ndjson'],
  ['.jsonl', 'ndjson'],
]);

/**
 * An export's format: `--format` (or `--json`) when given, else what `-o`'s extension names, else
 * CSV. Given and disagreeing with the extension: the format given wins, and `warning` says so.
 */
export function exportFormat(
  given: ExportFormat | undefined,
  output: string | undefined,
): { format: ExportFormat; warning?: string } {
  const named = output && output !== '-' ? BY_EXTENSION.get(extname(output).toLowerCase()) : undefined;
  if (given === undefined) return { format: named ?? 'csv' };
  if (named === undefined || named === given) return { format: given };
  return {
    format: given,
    warning: `warning: writing ${given.toUpperCase()} (--format ${given}) into ${output}, whose extension says ${named.toUpperCase()}.`,
  };
}
