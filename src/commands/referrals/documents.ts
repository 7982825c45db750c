import { readingAnswer } from '../../api/shape.js';
import { defineCommand } from '../../cli/define.js';
import { arg } from '../../cli/options.js';
import { selectFields } from '../../output/fields.js';
import { write } from '../../output/write.js';
import { checkReferral } from '../../referrals/check.js';
import { documentRows } from '../../referrals/documents.js';
import { fetchReferral } from '../../referrals/fetch.js';
import { resolveReferral } from '../../referrals/resolve.js';
import { DOCUMENTS, type DocumentRow, documentFields } from '../../resources/documents.js';

export default defineCommand({
  path: ['referrals', 'documents'],
  fields: [{ fields: DOCUMENTS.fields }],
  description:
    "One row per document: each procedure's report (in, or not yet with the visit's status) and images, then each entry of the referral's documents (AOB, invoice), with its own fields: document.<name> columns in CSV, --fields +document.<name> to pick one. Links (in any field, of any scheme) are shown and written without their query string or path parameters, in every format: a signed storage link is a credential, and a file or a pipe would keep it. The referral itself in a data format (referrals get, list, find and export with --json, NDJSON or CSV) is the API's data as sent, its links whole. signed is yes (true in JSON and NDJSON, as available is) where one was taken off; imaging referrals download fetches the files.",
  args: [arg('<id>', 'ID or reference')],
  examples: [
    'imaging referrals documents R-240004',
    'imaging referrals documents 3212c76a-c27e-4ca2-9e90-bb9c865c1630 --format csv > documents.csv',
  ],
  async run(ctx, [id]) {
    const format = ctx.format('table');
    const fields = selectFields(ctx.globals.fields, DOCUMENTS.fields);
    const resolved = await resolveReferral(ctx, id);
    const rid = resolved.id;
    // A reference found through the list brings the referral with it: no second request.
    const { data, requestId } = resolved.referral
      ? { data: resolved.referral, requestId: undefined }
      : await fetchReferral(ctx, rid);
    readingAnswer(requestId, () => checkReferral(data));
    const rows = documentRows(data);
    // Named as the user knows it: its reference when it has one.
    const named = typeof data.reference === 'string' && data.reference.trim() !== '' ? data.reference : rid;
    // The Details column is for documents' own fields: left out of a table with none.
    const details = rows.some((r) => documentFields(r) !== null);
    // JSON and NDJSON are data: available and signed are booleans there; tables and CSV read yes/no.
    const records =
      format === 'json' || format === 'ndjson'
        ? rows.map((r) => ({ ...r, available: r.available === 'yes', signed: r.signed === 'yes' }))
        : rows;
    await write(records as DocumentRow[], {
      sink: ctx.sink(),
      format,
      fields,
      columns: details ? DOCUMENTS.columns : DOCUMENTS.columns.filter((c) => c.header !== 'Details'),
      emptyHint: `Referral ${named} has no procedures and no documents yet.`,
    });
    return 0;
  },
});
