import { defineCommand } from '../../cli/define.js';
import { readInput } from '../../cli/input.js';
import { file, flag, list, text } from '../../cli/options.js';
import {
  checkOptions,
  ENCODING_OPTION,
  HEADER_OPTIONS,
  MAX_WEBHOOK_BYTES,
  parseHeaderFlag,
  renderVerdict,
  verdictJson,
} from '../../cli/webhook-options.js';
import { ExitCode, UsageError } from '../../errors.js';
import { safe } from '../../output/text.js';
import { write } from '../../output/write.js';
import { CaptureError, parseCapture } from '../../webhook/capture.js';
import { loadSecret } from '../../webhook/secret.js';
import { verifyDelivery } from '../../webhook/verify.js';

export default defineCommand({
  path: ['webhook', 'verify'],
  formats: ['table', 'json'],
  options: {
    request: file('--request <file>', 'a raw HTTP request as captured, or - for standard input'),
    body: file('--body <file>', 'the body alone (with --header), or - for standard input'),
    header: list('--header <header>', '"Name: value" (repeatable, with --body)'),
    encoding: ENCODING_OPTION,
    tolerance: text('--tolerance <seconds>', 'fail a timestamp further than this from now (past or future)'),
    allowUnsigned: flag(
      '--allow-unsigned',
      'accept an unsigned referral.auto_book_completed (sent to a per-request URL)',
    ),
    ...HEADER_OPTIONS,
  },
  async run(ctx, _args, opts) {
    const { names, encoding, tolerance } = checkOptions(opts);
    const format = ctx.format('table');
    if ((opts.request === undefined) === (opts.body === undefined)) {
      throw new UsageError(
        'give the delivery with --request FILE (a raw HTTP request) or --body FILE with --header "Name: value"',
      );
    }
    if (opts.request !== undefined && opts.header?.length) {
      throw new UsageError('--header goes with --body; a --request capture carries its own headers');
    }
    if (opts.request === '-' && opts.secretFile === undefined && !ctx.env.IMAGING_WEBHOOK_SECRET) {
      throw new UsageError(
        'the request comes on standard input, so the secret cannot be asked for there',
        'Use --secret-file or IMAGING_WEBHOOK_SECRET.',
      );
    }
    const headers: Array<[string, string]> = (opts.header ?? []).map(parseHeaderFlag);
    let body: Buffer;
    let notes: string[] = [];
    if (opts.request !== undefined) {
      const raw = await readInput(ctx, opts.request, '--request', MAX_WEBHOOK_BYTES);
      try {
        const capture = parseCapture(raw);
        headers.push(...capture.headers);
        body = capture.body;
        notes = capture.notes;
      } catch (err) {
        if (err instanceof CaptureError) throw new UsageError(`--request: ${err.message}`);
        throw err;
      }
    } else {
      body = await readInput(ctx, opts.body!, '--body', MAX_WEBHOOK_BYTES);
    }
    const secret = await loadSecret(ctx, opts);
    const verdict = verifyDelivery({
      headers,
      body,
      secret,
      encoding,
      tolerance,
      now: Math.floor(ctx.now().getTime() / 1000),
      names,
      allowUnsigned: Boolean(opts.allowUnsigned),
      captureNotes: notes,
    });
    for (const w of verdict.warnings) ctx.note(safe`warning: ${w}`);
    if (format === 'json') await write({ one: verdictJson(verdict) }, { sink: ctx.sink(), format });
    else ctx.out.block(renderVerdict(verdict, ctx.colorLevel() > 0));
    return verdict.valid ? ExitCode.ok : ExitCode.webhook;
  },
});
