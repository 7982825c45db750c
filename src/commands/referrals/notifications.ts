import type { ReferralNotification } from '../../api/types.js';
import { defineCommand } from '../../cli/define.js';
import { arg } from '../../cli/options.js';
import { showReferralRecords } from '../../referrals/records.js';
import { NOTIFICATIONS } from '../../resources/notifications.js';

export default defineCommand({
  path: ['referrals', 'notifications'],
  fields: [{ fields: NOTIFICATIONS.fields }],
  description:
    "The API's ReferralNotification records, metadata only: a table for people; --json, --format ndjson or csv for every field. The read is enabled per account. Its path is not published: the default is /api/v2/referrals/{id}/notifications; set the real one per environment with imaging config set path.notifications '/api/v2/…/{id}/…'.",
  args: [arg('<id>', 'ID or reference')],
  examples: ['imaging referrals notifications 3212c76a-c27e-4ca2-9e90-bb9c865c1630 --json'],
  run(ctx, [id]) {
    return showReferralRecords<ReferralNotification>(ctx, id, {
      kind: 'notifications',
      endpoint: 'notification read',
      noun: 'notifications',
      resource: NOTIFICATIONS,
    });
  },
});
