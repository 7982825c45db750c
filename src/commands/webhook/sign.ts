import { requireHttpUrl } from '../../cli/args.js';
import { defineCommand } from '../../cli/define.js';
import { readInput } from '../../cli/input.js';
import { completes, file, text } from '../../cli/options.js';
import {
  HEADER_OPTIONS,
  headerNames,
  MAX_WEBHOOK_BYTES,
  parseEncoding,
  shellQuote,
} from '../../cli/webhook-options.js';
import { CliError, UsageError } from '../../errors.js';
import { safe } from '../../output/text.js';
import { write } from '../../output/write.js';
import { loadSecret } from '../../webhook/secret.js';
import { type DigestEncoding, signatureHeaderValue } from '../../webhook/sign.js';

/** Prints the three headers a signed delivery carries, for partners testing their receivers. */
export default defineCommand({
  path: ['webhook', 'sign'],
  formats: ['table', 'json'],
  options: {
    body: file('--body <file>', 'the JSON body, or - for standard input', { required: true }),
    timestamp: text('--timestamp <unix-seconds>', 'default: now'),
    event: text('--event <name>', "default: the body's event_name"),
    encoding: completes(text('--encoding <encoding>', 'hex (default) or base64'), ['hex', 'base64']),
    curl: text('--curl <url>', 'print a curl command that posts the exact body with these headers'),
    ...HEADER_OPTIONS,
  },
  async run(ctx, _args, opts) {
    const names = headerNames(opts);
    const encoding = parseEncoding(opts.encoding, false) as DigestEncoding;
    const format = ctx.format('table');
    if (!opts.body) throw new UsageError('--body is required (a file, or - for standard input)');
    if (opts.timestamp !== undefined && !/^\d+$/.test(opts.timestamp.trim())) {
      throw new UsageError(`--timestamp must be Unix seconds, not "${opts.timestamp}"`);
    }
    if (opts.curl !== undefined) requireHttpUrl('--curl', opts.curl);
    if (opts.body === '-' && opts.secretFile === undefined && !ctx.env.IMAGING_WEBHOOK_SECRET) {
      throw new UsageError(
        'the body comes on standard input, so the secret cannot be asked for there',
        'Use --secret-file or IMAGING_WEBHOOK_SECRET.',
      );
    }
    const body = await readInput(ctx, opts.body, '--body', MAX_WEBHOOK_BYTES);
    let event = opts.event;
    if (event === undefined) {
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { event_name?: unknown };
        if (typeof parsed?.event_name === 'string') event = parsed.event_name;
      } catch {
        // not JSON: then --event is needed
      }
    }
    if (!event)
      throw new UsageError('no event name: the body has no event_name', 'Give it with --event NAME.');
    const secret = await loadSecret(ctx, opts);
    for (const w of secret.warnings) ctx.note(safe`warning: ${w}`);
    const timestamp = opts.timestamp?.trim() ?? String(Math.floor(ctx.now().getTime() / 1000));
    const signature = signatureHeaderValue(secret.key, timestamp, body, encoding);
    const headers: Array<[string, string]> = [
      [names.event, event],
      [names.timestamp, timestamp],
      [names.signature, signature],
    ];
    if (opts.curl !== undefined) {
      const data = opts.body === '-' ? shellQuote(body.toString('utf8')) : `@${shellQuote(opts.body)}`;
      if (opts.body === '-' && body.includes(0))
        throw new CliError(
          'the body holds a NUL byte and cannot be put on a command line; save it to a file and use --body FILE',
          2,
        );
      const parts = [
        'curl -sS -X POST',
        shellQuote(opts.curl),
        `-H ${shellQuote('Content-Type: application/json')}`,
        `-H ${shellQuote('User-Agent: Service-Webhook/1.0')}`,
        ...headers.map(([k, v]) => `-H ${shellQuote(`${k}: ${v}`)}`),
        `--data-binary ${data}`,
      ];
      ctx.io.stdout.write(`${parts.join(' \\\n  ')}\n`);
      return 0;
    }
    if (format === 'json') {
      await write(
        { one: { event, timestamp, signature, encoding, headers: Object.fromEntries(headers) } },
        { sink: ctx.sink(), format },
      );
    } else {
      for (const [k, v] of headers) ctx.out.line(safe`${k}: ${v}`);
    }
    return 0;
  },
});
