import { readingAnswer } from '../../api/shape.js';
import { isUuid, MAX_ARG_BYTES } from '../../cli/args.js';
import { defineCommand } from '../../cli/define.js';
import { readInput } from '../../cli/input.js';
import { arg } from '../../cli/options.js';
import { checkRecords } from '../../cli/read-list.js';
import { referralListFields } from '../../cli/renamed-fields.js';
import type { Context } from '../../context.js';
import { CliError, ExitCode, UsageError } from '../../errors.js';
import { refuseTerminal } from '../../output/format.js';
import { write } from '../../output/write.js';
import { checkReferral } from '../../referrals/check.js';
import { fetchReferral } from '../../referrals/fetch.js';
import { dateOfBirth, referralSearch, searchText } from '../../referrals/match.js';
import { searchReferrals } from '../../referrals/resolve.js';
import { REFERRAL_LIST_FIELDS, referralColumns } from '../../resources/referrals.js';

export default defineCommand({
  path: ['referrals', 'find'],
  formats: ['table', 'json', 'ndjson', 'csv', 'xlsx'],
  fields: [{ fields: REFERRAL_LIST_FIELDS }],
  description:
    'Finds referrals by id, reference, patient name (the last name, or "last, first", or first and last), date of birth (YYYY-MM-DD or MM/DD/YYYY) or claim number (wc_number, insurance_number); case, accents (ø, æ, ß, œ too), commas and hyphens do not matter, and several words are one text (find Mary Garcia). Asks the list with q first and trusts the answer only when every record matches it; otherwise reads the list page by page, and stops at the referral whose reference is the text. Prints the referral list\'s table and formats. Nothing found is exit 4. Nothing is cached or written to disk; --verbose shows q as [redacted].',
  // Several words are one text, as gh search reads them: find Garcia Mary is find 'Garcia Mary'.
  args: [
    arg(
      '<text...>',
      'reference, patient name, date of birth or claim number (several words: one text); - reads it from standard input',
    ),
  ],
  examples: [
    'imaging referrals find R-240001',
    "imaging referrals find 'garcia, mary'",
    "printf '%s\\n' 'garcia, mary' | imaging referrals find -   # the name not in ps",
    'imaging referrals find Mary Garcia',
    'imaging referrals find 03/10/1992 --json',
    'imaging referrals find MBR100002 --format csv',
  ],
  async run(ctx, [given]) {
    const parts = given as unknown as string[] | string;
    const joined = Array.isArray(parts) ? parts.join(' ') : parts;
    const typed = joined === '-' ? await searchFromStdin(ctx) : joined;
    const format = ctx.format('table');
    refuseTerminal(format, ctx.io.stdoutIsTTY);
    const fields = referralListFields(ctx, format);
    // A date that is none ("02/30/1990") is a usage error here, before any request.
    dateOfBirth(searchText(typed));
    const search = referralSearch(typed);
    // A referral's id, pasted: the referral itself (one request), as every other command takes it.
    const found = isUuid(search.text)
      ? { records: [(await fetchReferral(ctx, search.text.toLowerCase())).data], searched: '' }
      : await searchReferrals(ctx, search);
    if (found.records.length === 0)
      throw new CliError(
        `no referral matches "${search.text}": searched ${found.searched}`,
        ExitCode.notFound,
        'Search by reference, last name ("Garcia" or "Garcia, Mary"), date of birth (YYYY-MM-DD or MM/DD/YYYY) or claim number.',
      );
    readingAnswer(undefined, () =>
      checkRecords(found.records, 'referrals', format, 0, (r, i) =>
        checkReferral(r, `referral item ${i + 1}`),
      ),
    );
    await write(found.records, {
      sink: ctx.sink(),
      format,
      columns: referralColumns,
      fields,
      signal: ctx.signal,
    });
    return 0;
  },
});

/**
 * `find -`: the text from standard input (its first line), so a patient's name or date of birth is not in
 * the command line, which any local user can read (`ps`).
 */
async function searchFromStdin(ctx: Context): Promise<string> {
  const lines = (await readInput(ctx, '-', 'find', MAX_ARG_BYTES))
    .toString('utf8')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 0) throw new UsageError('nothing to search for on standard input (find -)');
  if (lines.length > 1)
    throw new UsageError(
      `find - reads one search text, and standard input holds ${lines.length} lines`,
      'Search one at a time; for many referrals by reference, see imaging referrals download --from FILE.',
    );
  return lines[0]!;
}
