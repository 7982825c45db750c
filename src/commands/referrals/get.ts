import { getReferral } from '../../api/endpoints/referrals.js';
import { readingAnswer } from '../../api/shape.js';
import { defineCommand } from '../../cli/define.js';
import { arg } from '../../cli/options.js';
import { selectFields } from '../../output/fields.js';
import { checkReferral } from '../../referrals/check.js';
import { renderReferral } from '../../referrals/detail.js';
import { resolveReferral } from '../../referrals/resolve.js';
import { REFERRAL_FIELDS } from '../../resources/referrals.js';

export default defineCommand({
  path: ['referrals', 'get'],
  formats: ['table', 'json'],
  fields: [{ fields: REFERRAL_FIELDS }],
  args: [arg('<id>', 'ID or reference')],
  async run(ctx, [id]) {
    const format = ctx.format('table');
    const { chosen } = selectFields(ctx.globals.fields, REFERRAL_FIELDS);
    const { id: rid } = await resolveReferral(ctx, id);
    const res = await getReferral(ctx.api(), rid);
    if (chosen || (format === 'json' && ctx.io.stdoutIsTTY)) {
      // Only the chosen fields: a table of them, or an object keyed as typed (JSON for a terminal: escaped).
      const { write } = await import('../../output/write.js');
      await write(
        { one: res.data },
        { sink: ctx.sink(), format, fields: { documented: REFERRAL_FIELDS, chosen } },
      );
      return 0;
    }
    if (format === 'json') {
      // Exactly as the API sent it.
      ctx.io.stdout.write(res.raw);
      if (res.raw.length === 0 || res.raw[res.raw.length - 1] !== 0x0a) ctx.io.stdout.write('\n');
      return 0;
    }
    readingAnswer(res.requestId, () => checkReferral(res.data));
    ctx.out.block(
      renderReferral(res.data, { color: ctx.colorLevel() > 0, timeZone: ctx.env.TZ || undefined }),
    );
    return 0;
  },
});
