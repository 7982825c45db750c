import { UnreadableAnswerError } from '../errors.js';

/**
 * Checks of an answer's shape where a renderer reads it: an unexpected shape is "an answer this
 * tool cannot read", said in our own words (no server text), never a TypeError.
 */

export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'true/false';
  return typeof value;
}

const at = (where: string, field: string) => (where ? `${where}: ${field}` : field);

function expectText(value: unknown, where: string, field: string): void {
  if (value === undefined || value === null) return;
  const t = typeof value;
  if (t === 'string' || t === 'number' || t === 'boolean') return;
  throw new UnreadableAnswerError(`${at(where, field)} is ${kindOf(value)}, not text`);
}

export function expectString(value: unknown, where: string, field: string): void {
  if (value === undefined || value === null || typeof value === 'string') return;
  throw new UnreadableAnswerError(`${at(where, field)} is ${kindOf(value)}, not text`);
}

export function expectObject(value: unknown, where: string, field: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new UnreadableAnswerError(`${at(where, field)} is ${kindOf(value)}, not an object`);
}

export function expectRecords(value: unknown, where: string, field: string): Record<string, unknown>[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new UnreadableAnswerError(`${at(where, field)} is ${kindOf(value)}, not a list`);
  value.forEach((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new UnreadableAnswerError(
        `${at(where, `${field} item ${i + 1}`)} is ${kindOf(item)}, not an object`,
      );
  });
  return value as Record<string, unknown>[];
}

export function expectTexts(record: Record<string, unknown>, where: string, fields: readonly string[]): void {
  for (const f of fields) expectText(record[f], where, f);
}

export function checkListItems(items: readonly unknown[], noun: string): void {
  items.forEach((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new UnreadableAnswerError(`${noun}: item ${i + 1} is ${kindOf(item)}, not an object`);
  });
}

/** Runs a check or a renderer; a shape problem found there carries the answer's request id. */
export function readingAnswer<T>(requestId: string | undefined, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof UnreadableAnswerError) throw err.withRequestId(requestId);
    throw err;
  }
}
