import { cptMappings } from '../../api/endpoints/reference.js';
import type { CptMapping } from '../../api/types.js';
import { UsageError } from '../../errors.js';
import { CPT_TEXT, cptColumns } from '../../output/columns/reference.js';
import { renderList } from '../../output/render.js';
import { defineCommand } from '../define.js';
import { arg } from '../options.js';
import { readList } from '../read-list.js';

/** CPT codes are five characters: five digits (Category I) or four digits and F or T (Categories II, III). */
const CPT_RE = /^\d{4}[0-9FT]$/;

export default defineCommand({
  path: ['cpt'],
  args: [arg('<code>', 'an exact CPT code, e.g. 73721')],
  async run(ctx, [code]) {
    const c = code.trim().toUpperCase();
    if (!CPT_RE.test(c)) {
      throw new UsageError(
        `"${code}" is not a CPT code`,
        'A CPT code is five characters, e.g. 73721 or 0042T.',
      );
    }
    const format = ctx.format('table');
    const res = await cptMappings(ctx.referenceApi(), c);
    await renderList(ctx.sink(), readList<CptMapping>(res, 'CPT mappings', format, CPT_TEXT), {
      format,
      columns: cptColumns,
      emptyHint: `No procedure mappings for CPT code ${c}.`,
    });
    return 0;
  },
});
