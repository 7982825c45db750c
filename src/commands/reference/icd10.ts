import { icd10Codes } from '../../api/endpoints/reference.js';
import { expectTexts } from '../../api/shape.js';
import { isUuid, normaliseUuid } from '../../cli/args.js';
import { defineCommand } from '../../cli/define.js';
import { checkPaging, listCommand, PAGING_OPTIONS } from '../../cli/list.js';
import { arg, text } from '../../cli/options.js';
import { UsageError } from '../../errors.js';
import { selectFields } from '../../output/fields.js';
import { ICD10_FIELDS, ICD10_TEXT, icd10Columns } from '../../resources/icd10.js';

export default defineCommand({
  path: ['icd10'],
  fields: [{ fields: ICD10_FIELDS }],
  formats: ['table', 'json', 'ndjson', 'csv', 'xlsx'],
  args: [arg('[query]', 'matched against code or short description')],
  options: {
    ids: text('--ids <uuids>', 'comma-separated ICD-10 ids to include and prioritise'),
    ...PAGING_OPTIONS,
  },
  async run(ctx, [query], opts) {
    const ids = opts.ids === undefined ? undefined : splitIds(opts.ids);
    checkPaging(opts);
    return listCommand(ctx, {
      fields: selectFields(ctx.globals.fields, ICD10_FIELDS),
      endpoint: icd10Codes({ q: query?.trim() || undefined, ids }),
      page: opts.page,
      perPage: opts.perPage,
      all: opts.all,
      noun: 'ICD-10 codes',
      cached: true,
      check: (x, i) => expectTexts(x as Record<string, unknown>, `ICD-10 codes: item ${i + 1}`, ICD10_TEXT),
      columns: icd10Columns,
      emptyHint: query ? `No ICD-10 codes match "${query}".` : 'No ICD-10 codes were returned.',
    });
  },
});

function splitIds(value: string): string[] {
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (ids.length === 0) throw new UsageError('--ids needs at least one id');
  const bad = ids.filter((id) => !isUuid(id));
  if (bad.length > 0) throw new UsageError(`--ids: not a UUID: ${bad.join(', ')}`);
  return ids.map(normaliseUuid);
}
