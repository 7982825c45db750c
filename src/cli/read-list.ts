import type { ApiResponse } from '../api/client.js';
import { extractList } from '../api/pages.js';
import { checkListItems, expectTexts, kindOf, readingAnswer } from '../api/shape.js';
import { UnreadableAnswerError } from '../errors.js';
import type { OutputFormat } from '../output/format.js';

export function readList<T>(
  res: Pick<ApiResponse, 'data' | 'requestId'> & { url?: string },
  noun: string,
  format: OutputFormat,
  text: readonly string[],
  /** Said after the hint when the answer is not a list (what else the user can check). */
  more?: string,
): T[] {
  return readingAnswer(res.requestId, () => {
    let items: unknown[];
    try {
      items = extractList(res.data).items;
    } catch (err) {
      if (!(err instanceof UnreadableAnswerError)) throw err;
      // --json cannot print a non-list either: the hint names the command that shows it as sent.
      const path = res.url ? apiPath(res.url) : undefined;
      throw new UnreadableAnswerError(
        `the ${noun} answer is ${kindOf(res.data)}, not a list`,
        undefined,
        [
          "This is a problem with the server's answer, not with your command; quote the request id if you report it.",
          path ? `See the answer as sent with: imaging api ${path} (and the same --env).` : '',
          more ?? '',
        ]
          .filter(Boolean)
          .join(' '),
      );
    }
    checkRecords(items, noun, format, 0, (item, i) =>
      expectTexts(item as Record<string, unknown>, `${noun}: item ${i + 1}`, text),
    );
    return items as T[];
  });
}

// A table or CSV reads fields: each record must be an object, and a table checks its text fields.
export function checkRecords(
  items: readonly unknown[],
  noun: string,
  format: OutputFormat,
  offset: number,
  check: ((record: unknown, index: number) => void) | undefined,
): void {
  if (format !== 'table' && format !== 'csv') return;
  checkListItems(items as unknown[], noun);
  if (check && format === 'table') for (let i = 0; i < items.length; i++) check(items[i], offset + i);
}

/** The path of a request URL as `imaging api` takes it (from /api/v2 on), quoted for a shell when it must be. */
export function apiPath(url: string): string {
  const u = new URL(url);
  const full = `${u.pathname}${u.search}`;
  const at = full.indexOf('/api/v2/');
  const path = at >= 0 ? full.slice(at) : full;
  return /^[\w/.~%:@-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
