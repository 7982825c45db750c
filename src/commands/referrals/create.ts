import type { ApiClient } from '../../api/client.js';
import { createReferral, REFERRALS_PATH } from '../../api/endpoints/referrals.js';
import { kindOf, readingAnswer } from '../../api/shape.js';
import type { Referral } from '../../api/types.js';
import { apiUrl } from '../../api/url.js';
import { defineCommand } from '../../cli/define.js';
import { parseJsonInput, readInput } from '../../cli/input.js';
import { file, flag } from '../../cli/options.js';
import { envArg } from '../../config/environments.js';
import type { Context } from '../../context.js';
import { ApiError, ExitCode, UnreadableAnswerError, UsageError } from '../../errors.js';
import { selectFields } from '../../output/fields.js';
import { clean, safe } from '../../output/text.js';
import { writeJson } from '../../output/write.js';
import { checkReferral } from '../../referrals/check.js';
import { renderReferral } from '../../referrals/detail.js';
import { findText } from '../../referrals/new-referral.js';
import { REFERRAL_FIELDS } from '../../resources/referrals.js';

/** What is sent: the bytes as given (--file) or the guided flow's payload, and how it came. */
interface Outgoing {
  bytes: Buffer;
  payload: unknown;
  from: 'file' | 'stdin' | 'guided';
}

export default defineCommand({
  path: ['referrals', 'create'],
  formats: ['table', 'json'],
  fields: [{ fields: REFERRAL_FIELDS }],
  description:
    'The create payload is not published: --file sends any JSON object as it is, after a syntax check. On a terminal without --file, a guided flow asks for the patient, line of business, payment type, incident state, each exam (modality, body part, then the CPT code and which of its mappings: side, contrast), ICD-10 codes and the law firm by search, the scheduling mode and preferred imaging center, and builds the shape of the example payload in docs/recipes.md (a guess: use --file for any other). The CPT code is typed and then checked against the modality and body part: the API looks CPT mappings up by exact code only and publishes no list of them by modality and body part. It shows the payload and asks before sending. Reference lists come from the cache; nothing typed is written to disk. A server failure (5xx) may still have created the referral: check with referrals find before trying again (the API has no idempotency key).',
  options: {
    file: file(
      '--file <file>',
      'JSON file, or - for standard input (without: the guided flow on a terminal)',
    ),
    dryRun: flag('--dry-run', 'print the payload that would be sent, and send nothing'),
  },
  examples: [
    'imaging referrals create                        # on a terminal: asks, shows the payload, asks before sending',
    'imaging referrals create --dry-run              # asks, then prints the payload only',
  ],
  async run(ctx, _args, opts) {
    const format = ctx.format('table');
    const { chosen } = selectFields(ctx.globals.fields, REFERRAL_FIELDS);
    const out = opts.file ? await fromFile(ctx, opts.file) : await guided(ctx);
    if (opts.dryRun) {
      if (out.from === 'guided') writeJson(ctx.sink(), out.payload);
      else ctx.io.stdout.write(out.bytes);
      // Where it would go needs the base URL only: a dry run from a file needs no token.
      const url = apiUrl(ctx.requireBaseUrl(), REFERRALS_PATH);
      ctx.note(`Nothing was sent (--dry-run): this is the body of POST ${url}.`);
      return 0;
    }
    const client = ctx.api(); // token and base URL checked before anyone is asked anything
    if (!(await confirmed(ctx, client, out))) {
      ctx.note('Nothing was sent.');
      return ExitCode.failure;
    }
    const res = await createReferral(client, out.bytes).catch((err: unknown) => {
      throw mayExist(err, out.payload, ctx.environment().value);
    });
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
      writeJson(ctx.sink(), res.data);
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

async function fromFile(ctx: Context, name: string): Promise<Outgoing> {
  const bytes = await readInput(ctx, name, '--file');
  const payload = parseJsonInput(bytes, name === '-' ? 'standard input' : name);
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new UsageError('the referral must be a JSON object', 'Nothing was sent.');
  }
  // The create payload is not published: the bytes go as they are, after the syntax check.
  return { bytes, payload, from: name === '-' ? 'stdin' : 'file' };
}

async function guided(ctx: Context): Promise<Outgoing> {
  if (!ctx.io.stdinIsTTY)
    throw new UsageError(
      '--file is required (a JSON file, or - for standard input)',
      'On a terminal, without --file, referrals create asks for each field instead.',
    );
  ctx.api(); // token and base URL checked before the first question
  const [{ askNewReferral }, { referralPayload }, { inquirerAsker }] = await Promise.all([
    import('../../referrals/guided.js'),
    import('../../referrals/new-referral.js'),
    import('../../cli/guided-prompts.js'),
  ]);
  const ask = await inquirerAsker(ctx.io, ctx.signal);
  ctx.note('A new referral: each question in turn (Ctrl-C stops; nothing is sent before you confirm).');
  const payload = referralPayload(await askNewReferral(ctx, ask));
  return { bytes: Buffer.from(JSON.stringify(payload)), payload, from: 'guided' };
}

/** Guided: the payload is shown and confirmed. From a file: asked only in production (or --yes). */
async function confirmed(ctx: Context, client: ApiClient, out: Outgoing): Promise<boolean> {
  const production = ctx.targetsProduction();
  if (out.from === 'guided') {
    ctx.err.write(`${JSON.stringify(out.payload, null, 2)}\n`);
    if (ctx.globals.yes) return true;
    const { inquirerAsker } = await import('../../cli/guided-prompts.js');
    const where = production ? `PRODUCTION (${client.baseUrl})` : client.baseUrl;
    return (await inquirerAsker(ctx.io, ctx.signal)).confirm(`Send this referral to ${where}?`, false);
  }
  if (ctx.globals.yes || !production) return true;
  if (!ctx.io.stdinIsTTY || out.from === 'stdin') {
    throw new UsageError(
      'creating a referral in production needs confirmation',
      out.from === 'stdin'
        ? 'The referral came on standard input, so it cannot also answer a question: add --yes.'
        : 'There is no terminal to ask on: add --yes to confirm.',
    );
  }
  return (await ctx.prompter()).confirm(`Create this referral in PRODUCTION (${client.baseUrl})?`);
}

/** A server failure after the request went out: the referral may have been created all the same. */
function mayExist(err: unknown, payload: unknown, env: string): unknown {
  if (!(err instanceof ApiError) || err.status < 500) return err;
  const who = findText(payload);
  const what = who ? `'${who.replace(/'/g, `'\\''`)}'` : 'LAST_NAME';
  const check = `imaging${envArg(env)} referrals find ${what}`;
  return new ApiError(
    err.details,
    `The referral may have been created all the same (the API has no idempotency key): check before trying again, with: ${check}`,
  );
}
