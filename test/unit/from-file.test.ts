import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { referralsInFile } from '../../src/referrals/from-file.js';

const A = '3212c76a-c27e-4ca2-9e90-bb9c865c1630';
const B = 'e772e6de-124f-4803-9bed-d534febc8634';

describe('the referrals a --from file names', () => {
  it("an export's CSV: the referral_id column, quoted fields and a BOM understood, each once", () => {
    const csv = `\uFEFFreferral_id,reference,patient_name\r\n${A},R-240001,"Hernández, Emma"\r\n${A},R-240001,"a ""quoted""\nline"\r\n${B},R-240002,x\r\n`;
    expect(referralsInFile(csv, 'r.csv')).toEqual([A, B]);
    expect(referralsInFile('reference,status\nR-1,pending\nR-2,closed\n', 'r.csv')).toEqual(['R-1', 'R-2']);
  });

  it('NDJSON and JSON records (id, referral_id or reference), or a {referrals} answer', () => {
    expect(referralsInFile(`{"id":"${A}"}\n{"referral_id":"${B}"}\n`, 'x')).toEqual([A, B]);
    expect(referralsInFile(`[{"id":"${A}"},{"reference":"R-9"}]`, 'x')).toEqual([A, 'R-9']);
    expect(referralsInFile(`{"referrals":[{"id":"${B}"}]}`, 'x')).toEqual([B]);
    expect(referralsInFile(`{"id":"${A}"}`, 'x')).toEqual([A]);
  });

  it('plain text: one ID or reference a line, blank lines and # comments skipped', () => {
    expect(referralsInFile(`# mine\n${A}\n\n  R-240004  \n${A}\n`, 'x')).toEqual([A, 'R-240004']);
  });

  it('refuses an empty file and a record without an id', () => {
    expect(() => referralsInFile(' \n', 'ids.txt')).toThrow(UsageError);
    expect(() => referralsInFile('[{"name":"x"}]', 'r.json')).toThrow(
      'r.json, record 1 has no referral_id, id or reference',
    );
    expect(() => referralsInFile('{"id":"a"}\n{"id":\n', 'r.ndjson')).toThrow('r.ndjson, line 2 is not JSON');
    expect(() => referralsInFile('{"id":', 'r.json')).toThrow('r.json is not JSON');
  });
});
