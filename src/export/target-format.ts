import { extname } from 'node:path';
import type { ExportFormat } from './pipeline.js';

const BY_EXTENSION = new Map<string, ExportFormat>([
  ['.csv', 'csv'],
  ['.json', 'json'],
  ['.ndjson', 'ndjson'],
  ['.jsonl', 'ndjson'],
  ['.xlsx', 'xlsx'],
]);

function formatOfPath(path: string | undefined): ExportFormat | undefined {
  return path && path !== '-' ? BY_EXTENSION.get(extname(path).toLowerCase()) : undefined;
}

/** A name ending in an extension no format matches (a path without one writes CSV, as said). */
function unknownExtension(path: string | undefined): boolean {
  return Boolean(path && path !== '-' && extname(path) !== '' && formatOfPath(path) === undefined);
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
  if (given === undefined)
    return named || !unknownExtension(output)
      ? { format: named ?? 'csv' }
      : {
          format: 'csv',
          warning: `warning: writing CSV into ${output}: ${extname(output as string)} is not a format this tool writes (.csv, .json, .ndjson, .jsonl, .xlsx).${/\.xls$/i.test(output as string) ? ' For Excel, name it .xlsx.' : ''}`,
        };
  if (named === undefined || named === given) return { format: given };
  return {
    format: given,
    warning: `warning: writing ${given.toUpperCase()} (--format ${given}) into ${output}, whose extension says ${named.toUpperCase()}.`,
  };
}
