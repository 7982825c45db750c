import { listModalities } from '../../api/endpoints/reference.js';
import type { Modality } from '../../api/types.js';
import { defineCommand } from '../../cli/define.js';
import { readList } from '../../cli/read-list.js';
import { selectFields } from '../../output/fields.js';
import { write } from '../../output/write.js';
import { MODALITY_FIELDS, MODALITY_TEXT, modalityColumns } from '../../resources/modalities.js';

export default defineCommand({
  path: ['modalities'],
  fields: [{ fields: MODALITY_FIELDS }],
  async run(ctx) {
    const format = ctx.format('table');
    const fields = selectFields(ctx.globals.fields, MODALITY_FIELDS);
    const res = await listModalities(ctx.referenceApi());
    await write(readList<Modality>(res, 'modalities', format, MODALITY_TEXT), {
      sink: ctx.sink(),
      format,
      fields,
      columns: modalityColumns,
      emptyHint: 'No modalities were returned.',
    });
    return 0;
  },
});
