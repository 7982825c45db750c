import { lawFirms } from '../../api/endpoints/law-firms.js';
import { expectTexts } from '../../api/shape.js';
import { defineCommand } from '../../cli/define.js';
import { checkPaging, listCommand, PAGING_OPTIONS } from '../../cli/list.js';
import { arg } from '../../cli/options.js';
import { UsageError } from '../../errors.js';
import { selectFields } from '../../output/fields.js';
import { LAW_FIRM_FIELDS, LAW_FIRM_TEXT, lawFirmColumns } from '../../resources/law-firms.js';

export default defineCommand({
  path: ['law-firms', 'search'],
  fields: [{ fields: LAW_FIRM_FIELDS }],
  formats: ['table', 'json', 'ndjson', 'csv', 'xlsx'],
  args: [arg('<query>', 'matched against name and contact fields')],
  options: PAGING_OPTIONS,
  async run(ctx, [query], opts) {
    const q = query.trim();
    if (q === '') throw new UsageError('the search query is empty');
    checkPaging(opts);
    return listCommand(ctx, {
      fields: selectFields(ctx.globals.fields, LAW_FIRM_FIELDS),
      endpoint: lawFirms(q),
      page: opts.page,
      perPage: opts.perPage,
      all: opts.all,
      noun: 'law firms',
      check: (f, i) => expectTexts(f as Record<string, unknown>, `law firms: item ${i + 1}`, LAW_FIRM_TEXT),
      columns: lawFirmColumns,
      emptyHint: `No law firms match "${q}". To request a new one: imaging law-firms create --name … --city … --state …`,
    });
  },
});
