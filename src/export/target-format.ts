import { extname } from 'node:path';
import type { ExportFormat } from './pipeline.js';

function formatOfPath(path: string | undefined): ExportFormat | undefined {
  if (!path || path === '-') return undefined;
  switch (extname(path).toLowerCase()) {
    case '.csv':
      return 'csv';
    case '.json':
      return 'json';
    case '.ndjson':
    case '.jsonl':
      return 'ndjson';
    default:
      return undefined;
  }
}

/**
 * An export's format: `--format` (or `--json`) when given, else what `-o`'s extension names, else
 * CSV. Given and disagreeing with the extension: the format given wins, and `warning` says so.
 */
export function exportFormat(
  given: ExportFormat | undefined,
  output: string | undefined,
): { format: ExportFormat; warning?: string } {
  const named = formatOfPath(output);
  if (given === undefined) return { format: named ?? 'csv' };
  if (named === undefined || named === given) return { format: given };
  return {
    format: given,
    warning: `warning: writing ${given.toUpperCase()} (--format ${given}) into ${output}, whose extension says ${named.toUpperCase()}.`,
  };
}
