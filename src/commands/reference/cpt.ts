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

export default defineCommand({
  path: ['cpt'],
  fields: [{ fields: CPT_FIELDS }],
  args: [arg('<code>', 'an exact CPT or HCPCS code: five letters or digits, e.g. 73721, 0042T, G0202')],
  async run(ctx, [code]) {
    const c = code.trim().toUpperCase();
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
