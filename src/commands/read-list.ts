import type { ApiResponse } from '../api/client.js';
import { extractList } from '../api/pages.js';
import { checkListItems, expectTexts, kindOf, readingAnswer } from '../api/shape.js';
import { UnreadableAnswerError } from '../errors.js';
import type { OutputFormat } from '../output/format.js';

/**
 * A list answer (an array of records, unpaged) read by the one list reader (`extractList`): an array, or an object holding
 * one. Anything else is an answer this tool cannot read (never "nothing was returned"), named
 * after what was asked for. For a table or CSV each item must be an object; a table also needs
 * its `text` fields to be text. JSON and NDJSON print the items as sent.
 */
export function readList<T>(
  res: Pick<ApiResponse, 'data' | 'requestId'>,
  noun: string,
  format: OutputFormat,
  text: readonly string[],
): T[] {
  return readingAnswer(res.requestId, () => {
    let items: unknown[];
    try {
      items = extractList(res.data).items;
    } catch (err) {
      if (!(err instanceof UnreadableAnswerError)) throw err;
      throw new UnreadableAnswerError(`the ${noun} answer is ${kindOf(res.data)}, not a list`);
    }
    if (format === 'table' || format === 'csv') checkListItems(items, noun);
    if (format === 'table')
      for (const [i, item] of items.entries())
        expectTexts(item as Record<string, unknown>, `${noun}: item ${i + 1}`, text);
    return items as T[];
  });
}
