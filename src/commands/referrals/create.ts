import { createReferral } from '../../api/endpoints/referrals.js';
import { kindOf, readingAnswer } from '../../api/shape.js';
import type { Referral } from '../../api/types.js';
import { defineCommand } from '../../cli/define.js';
import { parseJsonInput, readInput } from '../../cli/input.js';
import { file } from '../../cli/options.js';
import { ExitCode, UnreadableAnswerError, UsageError } from '../../errors.js';
import { selectFields } from '../../output/fields.js';
import { clean, safe } from '../../output/text.js';
import { checkReferral } from '../../referrals/check.js';
import { renderReferral } from '../../referrals/detail.js';
import { REFERRAL_FIELDS } from '../../resources/referrals.js';

export default defineCommand({
  path: ['referrals', 'create'],
  formats: ['table', 'json'],
  fields: [{ fields: REFERRAL_FIELDS }],
  options: {
    file: file('--file <file>', 'JSON file, or - for standard input', { required: true }),
  },
  async run(ctx, _args, opts) {
    if (!opts.file) throw new UsageError('--file is required (a JSON file, or - for standard input)');
    const format = ctx.format('table');
    const { chosen } = selectFields(ctx.globals.fields, REFERRAL_FIELDS);
    const bytes = await readInput(ctx, opts.file, '--file');
    const parsed = parseJsonInput(bytes, opts.file === '-' ? 'standard input' : opts.file);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new UsageError('the referral must be a JSON object', 'Nothing was sent.');
    }
    const env = ctx.environment().value;
    const client = ctx.api(); // token and base URL checked before anyone is asked anything
    if (env === 'production' && !ctx.globals.yes) {
      if (!ctx.io.stdinIsTTY || opts.file === '-') {
        throw new UsageError(
          'creating a referral in production needs confirmation',
          opts.file === '-'
            ? 'The referral came on standard input, so it cannot also answer a question: add --yes.'
            : 'There is no terminal to ask on: add --yes to confirm.',
        );
      }
      const ok = await (await ctx.prompter()).confirm(
        `Create this referral in PRODUCTION (${client.baseUrl})?`,
      );
      if (!ok) {
        ctx.note('Nothing was sent.');
        return ExitCode.failure;
      }
    }
    // The create payload is not published: the bytes go as they are, after the syntax check.
    const res = await createReferral(client, bytes);
    const created = res.data as unknown as Record<string, unknown> | null;
    const referral = (
      created && typeof created === 'object' && !Array.isArray(created) && 'referral' in created
        ? created.referral
        : created
    ) as Referral | null;
    if (chosen) {
      // Only the chosen fields of the created referral: a table of them, or an object keyed as typed.
      const { write } = await import('../../output/write.js');
      await write(
        { one: referral },
        { sink: ctx.sink(), format, fields: { documented: REFERRAL_FIELDS, chosen } },
      );
    } else if (format === 'json') {
      ctx.io.stdout.write(`${JSON.stringify(res.data, null, 2)}\n`);
    } else {
      readingAnswer(res.requestId, () => {
        if (typeof referral !== 'object' || referral === null || Array.isArray(referral))
          throw new UnreadableAnswerError(`the created referral is ${kindOf(referral)}, not an object`);
        checkReferral(referral, 'the created referral');
      });
      ctx.out.block(
        renderReferral(referral as Referral, {
          color: ctx.colorLevel() > 0,
          timeZone: ctx.env.TZ || undefined,
        }),
      );
    }
    ctx.note(
      safe`${`Created referral ${clean(referral?.reference ?? '')} ${clean(referral?.id ?? '')}`.replace(/\s+/g, ' ').trim()}`,
    );
    return 0;
  },
});
