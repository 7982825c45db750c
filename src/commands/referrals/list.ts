import { referrals } from '../../api/endpoints/referrals.js';
import { defineCommand } from '../../cli/define.js';
import { checkPaging, listCommand, PAGING_OPTIONS } from '../../cli/list.js';
import { int } from '../../cli/options.js';
import { PARAM_OPTION, paramsQuery } from '../../cli/params.js';
import { referralListFields } from '../../cli/renamed-fields.js';
import { UsageError } from '../../errors.js';
import { checkReferral } from '../../referrals/check.js';
import { REFERRAL_LIST_FIELDS, referralColumns } from '../../resources/referrals.js';

export default defineCommand({
  path: ['referrals', 'list'],
  fields: [{ fields: REFERRAL_LIST_FIELDS }],
  formats: ['table', 'json', 'ndjson', 'csv', 'xlsx'],
  options: {
    ...PAGING_OPTIONS,
    param: PARAM_OPTION,
    concurrency: int('--concurrency <n>', 'pages fetched at once with --all (default 4)', { max: 16 }),
  },
  async run(ctx, _args, opts) {
    checkPaging(opts);
    if (opts.concurrency !== undefined && !opts.all)
      throw new UsageError('--concurrency is for --all: one page is one request');
    const fields = referralListFields(ctx, ctx.format('table'));
    return listCommand(ctx, {
      fields,
      endpoint: referrals(paramsQuery(opts.param)),
      page: opts.page,
      perPage: opts.perPage,
      all: opts.all,
      concurrency: opts.concurrency,
      noun: 'referrals',
      columns: referralColumns,
      check: (r, i) => checkReferral(r, `referral item ${i + 1}`),
      emptyHint: 'No referrals match.',
    });
  },
});
