import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WrittenIdScanner } from '../../src/export/checkpoint.js';
import { csvRow } from '../../src/output/csv.js';
import '../reliability.js';

/**
 * A resumed export reads back the referral ids of the bytes a checkpoint saved (so that none is
 * written twice, and a shifted list is seen at the seam). Whatever the cells hold and wherever the
 * bytes are cut into chunks, it finds exactly the ids written.
 */

const uuid = fc.uuid();
const cell = fc.oneof(
  fc.string(),
  fc.constantFrom('a,b', 'line\r\nbreak', 'quote " inside', '""', '=1+1', '\n', ','),
);

function scan(format: string, rows: string, bytes: Buffer, cuts: number[]): { has(id: string): boolean } {
  const s = new WrittenIdScanner(format, rows);
  let at = 0;
  for (const c of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    s.push(bytes.subarray(at, c));
    at = c;
  }
  s.push(bytes.subarray(at));
  s.end();
  // IdSet has no iteration: it is asked about every candidate instead.
  return { has: (id: string) => s.written.ids.has(id) };
}

describe('the ids read back from a checkpoint', () => {
  it('CSV: the referral_id column wherever it is, cells with quotes, commas and line breaks, any chunks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(uuid, cell, cell), { minLength: 1, maxLength: 20 }),
        fc.nat({ max: 2 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        (records, where, bom, cuts) => {
          const header = ['name', 'note'];
          header.splice(where, 0, 'referral_id');
          let text = (bom ? '\uFEFF' : '') + csvRow(header);
          for (const [id, a, b] of records) {
            const row = [a, b];
            row.splice(where, 0, id);
            text += csvRow(row);
          }
          const seen = scan('csv', 'visit', Buffer.from(text), cuts);
          for (const [id] of records) expect(seen.has(id)).toBe(true);
          // Nothing else was taken for an id: the cells' text is not in it.
          for (const [, a] of records) if (!records.some(([id]) => id === a)) expect(seen.has(a)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('JSON and NDJSON: id (referral rows) or referral_id (visit rows), any chunks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(uuid, fc.string()), { minLength: 1, maxLength: 20 }),
        fc.constantFrom('json', 'ndjson'),
        fc.constantFrom('referral', 'visit'),
        fc.array(fc.nat(), { maxLength: 8 }),
        (records, format, rows, cuts) => {
          const key = rows === 'referral' ? 'id' : 'referral_id';
          const texts = records.map(([id, s]) =>
            JSON.stringify({ patient: { id: s }, [key]: id, note: `${s}\n` }),
          );
          // As the pipeline writes them: "[\n{…},\n{…}" for JSON (the checkpoint has no closing "]").
          const body = format === 'ndjson' ? texts.map((t) => `${t}\n`).join('') : `[\n${texts.join(',\n')}`;
          const seen = scan(format, rows, Buffer.from(body), cuts);
          for (const [id] of records) expect(seen.has(id)).toBe(true);
          for (const [, s] of records) if (!records.some(([id]) => id === s)) expect(seen.has(s)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});
