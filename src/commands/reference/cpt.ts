import { cptMappings } from '../../api/endpoints/reference.js';
import type { CptMapping } from '../../api/types.js';
import { defineCommand } from '../../cli/define.js';
import { arg } from '../../cli/options.js';
import { readList } from '../../cli/read-list.js';
import { UsageError } from '../../errors.js';
import { selectFields } from '../../output/fields.js';
import { write } from '../../output/write.js';
import { CPT_FIELDS, CPT_TEXT, cptColumns } from '../../resources/cpt.js';

// Five letters or digits: CPT (73721, 0001F, 0042T) and HCPCS Level II (G0202).
const CPT_RE = /^[A-Z0-9]{5}$/;

// Words rather than a mistyped code: plain text with a space or a run of four letters (no code has one).
const looksLikeWords = (v: string): boolean =>
  /^[A-Za-z0-9\s,./&-]+$/.test(v) && (/\s/.test(v.trim()) || /[A-Za-z]{4,}/.test(v));

const MODALITY_WORDS: Record<string, string> = {
  mri: 'MRI',
  ct: 'CT',
  'x-ray': 'X-Ray',
  xray: 'X-Ray',
  ultrasound: 'Ultrasound',
  arthrogram: 'Arthrogram',
  dexa: 'DEXA',
};

/** The modality the words name, if any, for the hint. */
function modalityIn(v: string): string | undefined {
  for (const w of v.toLowerCase().split(/[\s,/]+/)) if (MODALITY_WORDS[w]) return MODALITY_WORDS[w];
  return undefined;
}

export default defineCommand({
  path: ['cpt'],
  fields: [{ fields: CPT_FIELDS }],
  args: [arg('<code>', 'an exact CPT or HCPCS code: five letters or digits, e.g. 73721, 0042T, G0202')],
  async run(ctx, [code]) {
    const c = code.trim().toUpperCase();
    if (!CPT_RE.test(c) && looksLikeWords(code)) {
      // The API matches exact codes only; a search by words would silently find nothing.
      const modality = modalityIn(code);
      throw new UsageError(
        `"${code}" is words, not a code: the API looks up exact CPT codes only`,
        `To find an exam by name: imaging body-parts --modality ${modality ?? 'MRI'} lists the body parts${modality ? '' : ' (imaging modalities lists the others)'}; imaging cpt CODE then shows its mappings.`,
      );
    }
    if (!CPT_RE.test(c)) {
      throw new UsageError(
        `"${code}" is not a CPT or HCPCS code`,
        'A code is five letters or digits: 73721 (CPT), 0001F or 0042T (CPT Category II/III), G0202 (HCPCS Level II).',
      );
    }
    const format = ctx.format('table');
    const fields = selectFields(ctx.globals.fields, CPT_FIELDS);
    const res = await cptMappings(ctx.referenceApi(), c);
    await write(readList<CptMapping>(res, 'CPT mappings', format, CPT_TEXT), {
      sink: ctx.sink(),
      format,
      fields,
      columns: cptColumns,
      emptyHint: `No procedure mappings for code ${c}.`,
    });
    return 0;
  },
});
