import type { ReferralPayment } from '../../api/types.js';
import { defineCommand } from '../../cli/define.js';
import { arg } from '../../cli/options.js';
import { showReferralRecords } from '../../referrals/records.js';
import { PAYMENTS } from '../../resources/payments.js';

export default defineCommand({
  path: ['referrals', 'payments'],
  fields: [{ fields: PAYMENTS.fields }],
  description:
    "The API's ReferralPayment records: a table for people; --json, --format ndjson or csv for every field. The read is enabled per account. Its path is not published: the default is /api/v2/referrals/{id}/payments; set the real one per environment with imaging config set path.payments '/api/v2/…/{id}/…'.",
  args: [arg('<id>', 'ID or reference')],
  examples: [
    'imaging referrals payments 3212c76a-c27e-4ca2-9e90-bb9c865c1630',
    'imaging referrals payments 3212c76a-c27e-4ca2-9e90-bb9c865c1630 --format csv > payments.csv',
  ],
  run(ctx, [id]) {
    return showReferralRecords<ReferralPayment>(ctx, id, {
      kind: 'payments',
      endpoint: 'payment read',
      noun: 'payments',
      resource: PAYMENTS,
    });
  },
});
