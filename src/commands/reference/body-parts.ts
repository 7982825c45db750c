import type { ApiClient } from '../../api/client.js';
import { listBodyParts, listModalities } from '../../api/endpoints/reference.js';
import type { BodyPart, Modality } from '../../api/types.js';
import { isUuid, normaliseUuid } from '../../cli/args.js';
import { defineCommand } from '../../cli/define.js';
import { text } from '../../cli/options.js';
import { readList } from '../../cli/read-list.js';
import { UsageError } from '../../errors.js';
import { selectFields } from '../../output/fields.js';
import { write } from '../../output/write.js';
import { BODY_PART_FIELDS, BODY_PART_TEXT, bodyPartColumns } from '../../resources/body-parts.js';
import { MODALITY_TEXT } from '../../resources/modalities.js';
import { nearest } from '../../util/suggest.js';

export default defineCommand({
  path: ['body-parts'],
  fields: [{ fields: BODY_PART_FIELDS }],
  options: {
    modality: text(
      '--modality <name-or-id>',
      'only body parts for this modality: an id, or a name as imaging modalities lists it (case and hyphens aside)',
    ),
  },
  async run(ctx, _args, opts) {
    const format = ctx.format('table');
    const fields = selectFields(ctx.globals.fields, BODY_PART_FIELDS);
    const modality = opts.modality?.trim();
    if (opts.modality !== undefined && !modality) throw new UsageError('--modality needs a name or an id');
    const client = ctx.referenceApi();
    // An id in upper case is the same id: sent as the API stores it. A name is checked against the
    // modalities (reference data, cached) and sent as the API names it: "xray" is X-Ray.
    const sent = modality && (await modalityName(client, modality));
    const res = await listBodyParts(client, { modality: sent });
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

const folded = (v: string) => v.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * The modality typed, as the API names it: an id (in any case), or a name with case, spaces and hyphens
 * aside; else a usage error with a suggestion.
 */
async function modalityName(client: ApiClient, typed: string): Promise<string> {
  const modalities = readList<Modality>(await listModalities(client), 'modalities', 'json', MODALITY_TEXT);
  if (isUuid(typed)) {
    const id = normaliseUuid(typed);
    if (modalities.some((m) => m.id === id)) return id;
    throw new UsageError(
      `--modality: no modality has the id ${id}`,
      'The modalities and their ids: imaging modalities',
    );
  }
  const names = modalities.map((m) => m.name);
  const match = modalities.find(
    (m) => folded(m.name) === folded(typed) || folded(m.slug ?? '') === folded(typed),
  );
  if (match) return match.name;
  const guess = nearest(typed, names, (best) => Math.max(1, Math.floor(best.length / 3)));
  throw new UsageError(
    `--modality: no modality is named "${typed}"`,
    `${guess ? `Did you mean ${guess}? ` : ''}The modalities: ${names.join(', ')}.`,
  );
}
