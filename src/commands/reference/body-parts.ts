import { listBodyParts } from '../../api/endpoints/reference.js';
import type { BodyPart } from '../../api/types.js';
import { normaliseUuid } from '../../cli/args.js';
import { defineCommand } from '../../cli/define.js';
import { text } from '../../cli/options.js';
import { readList } from '../../cli/read-list.js';
import { UsageError } from '../../errors.js';
import { selectFields } from '../../output/fields.js';
import { write } from '../../output/write.js';
import { BODY_PART_FIELDS, BODY_PART_TEXT, bodyPartColumns } from '../../resources/body-parts.js';

export default defineCommand({
  path: ['body-parts'],
  fields: [{ fields: BODY_PART_FIELDS }],
  options: {
    modality: text('--modality <name-or-id>', 'only body parts for this modality'),
  },
  async run(ctx, _args, opts) {
    const format = ctx.format('table');
    const fields = selectFields(ctx.globals.fields, BODY_PART_FIELDS);
    const modality = opts.modality?.trim();
    if (opts.modality !== undefined && !modality) throw new UsageError('--modality needs a name or an id');
    // An id in upper case is the same id: sent as the API stores it.
    const res = await listBodyParts(ctx.referenceApi(), { modality: modality && normaliseUuid(modality) });
    await write(readList<BodyPart>(res, 'body parts', format, BODY_PART_TEXT), {
      sink: ctx.sink(),
      format,
      fields,
      columns: bodyPartColumns,
      emptyHint: modality
        ? `No body parts for modality "${modality}" (see: imaging modalities).`
        : 'No body parts were returned.',
    });
    return 0;
  },
});
