import { requireHttpUrl } from '../../cli/args.js';
import { defineCommand } from '../../cli/define.js';
import { arg, completes, flag, pairs, text } from '../../cli/options.js';
import { HEADER_OPTIONS, headerNames, parseEncoding } from '../../cli/webhook-options.js';
import type { Context } from '../../context.js';
import { CliError, UsageError } from '../../errors.js';
import type { OutputFormat } from '../../output/format.js';
import { safe } from '../../output/text.js';
import { write } from '../../output/write.js';
import { EVENT_NAMES } from '../../webhook/events.js';
import type { EventName } from '../../webhook/sample.js';
import { type DigestEncoding, signatureHeaderValue } from '../../webhook/sign.js';

/** Default target of --print (where `imaging webhook listen` listens). */
const LISTEN_URL = 'http://127.0.0.1:4030/';

// A realistic event, the user's overrides applied, signed as the service signs, POSTed to a receiver.
export default defineCommand({
  path: ['webhook', 'send'],
  formats: ['table', 'json', 'ndjson'],
  description:
    'The event is signed exactly as the service signs it. The secret comes from --secret-file, IMAGING_WEBHOOK_SECRET or a hidden prompt, never a flag.',
  args: [arg('<event>', `the event: ${EVENT_NAMES.join(', ')}`, { values: EVENT_NAMES })],
  options: {
    to: text('--to <url>', 'the receiver (http or https URL)'),
    set: pairs(
      '--set <path=value>',
      'change a field: referral.visits.0.status=booked (repeatable; JSON values)',
    ),
    print: flag('--print', 'write the signed HTTP request to stdout instead of sending it'),
    duplicate: flag('--duplicate', 'send it twice with the same event_id (at-least-once delivery)'),
    unsigned: flag(
      '--unsigned',
      'no timestamp or signature headers (auto-book results sent to a per-request webhook_url)',
    ),
    encoding: completes(text('--encoding <encoding>', 'digest text: hex (default) or base64'), [
      'hex',
      'base64',
    ]),
    ...HEADER_OPTIONS,
  },
  examples: [
    'imaging webhook listen --port 4030 &            # a local receiver, then:',
    'imaging webhook send visit.status_changed --to http://127.0.0.1:4030/ --secret-file secret.txt',
    'imaging webhook send notification.status_changed --to https://hooks.example.com/imaging --set status=opened --duplicate',
    'imaging webhook send referral.auto_book_completed --print > delivery.http',
  ],
  async run(ctx, [eventArg], opts) {
    const { parseEventName } = await import('../../webhook/sample.js');
    const name = parseEventName(eventArg);
    const names = headerNames(opts);
    const encoding = parseEncoding(opts.encoding, false) as DigestEncoding;
    const format = ctx.format('table');
    const url = checkTarget(opts);
    const { event, body } = await buildEvent(ctx, name, url, opts.set ?? []);
    const secret = opts.unsigned
      ? undefined
      : await (await import('../../webhook/secret.js')).loadSecret(ctx, opts);
    for (const w of secret?.warnings ?? []) ctx.note(safe`warning: ${w}`);
    const signed = (): Array<[string, string]> => {
      const headers: Array<[string, string]> = [
        ['Content-Type', 'application/json'],
        ['User-Agent', 'Service-Webhook/1.0'],
        [names.event, name],
      ];
      if (secret) {
        // Signed afresh for each delivery, as the service signs each retry.
        const ts = String(Math.floor(ctx.now().getTime() / 1000));
        headers.push(
          [names.timestamp, ts],
          [names.signature, signatureHeaderValue(secret.key, ts, body, encoding)],
        );
      }
      return headers;
    };
    if (opts.print) {
      const { rawRequest } = await import('../../webhook/deliver.js');
      ctx.io.stdout.write(rawRequest(url, signed(), body));
      return 0;
    }
    const delivery: Delivery = { name, event, body, url, signed, signedWithSecret: Boolean(secret) };
    const { results, failed } = await deliverAll(ctx, delivery, opts.duplicate ? 2 : 1, format);
    // The table's lines went out as each delivery was made; data formats get the results whole.
    if (format !== 'table') await write(results, { sink: ctx.sink(), format });
    if (failed)
      throw new CliError(
        secret ? withoutSecret(failed, secret) : failed,
        1,
        / within \d+ ms \(/.test(failed)
          ? 'The receiver started answering but did not finish its status and headers within --timeout (one deadline for the whole answer).'
          : failed.startsWith('no answer')
            ? 'Is the receiver running? imaging webhook listen starts one on 127.0.0.1:4030.'
            : 'The service counts anything but a 2xx as a failed delivery and sends it again with the same event_id.',
      );
    return 0;
  },
});

interface SendOptions {
  to?: string | undefined;
  print?: boolean | undefined;
  duplicate?: boolean | undefined;
  unsigned?: boolean | undefined;
  secretFile?: string | undefined;
  secretFormat?: string | undefined;
}

/** The receiver's URL, after the flags that cannot go together are refused. */
function checkTarget(opts: SendOptions): URL {
  if (opts.print && opts.duplicate)
    throw new UsageError(
      '--print writes the request and sends nothing; --duplicate sends it twice: pick one',
    );
  if (!opts.print && opts.to === undefined)
    throw new UsageError(
      '--to is required: the receiver URL',
      `e.g. --to ${LISTEN_URL} (imaging webhook listen)`,
    );
  const url = requireHttpUrl('--to', opts.to ?? LISTEN_URL);
  if (url.username || url.password) throw new UsageError('--to: credentials in the URL are not allowed');
  if (opts.unsigned && (opts.secretFile !== undefined || opts.secretFormat !== undefined))
    throw new UsageError('--unsigned sends no signature: leave out --secret-file and --secret-format');
  return url;
}

/** The sample event with the --set overrides, warning when it has left the spec's shape (sent as asked). */
async function buildEvent(
  ctx: Context,
  name: EventName,
  url: URL,
  set: ReadonlyArray<[string, string]>,
): Promise<{ event: Record<string, unknown>; body: Buffer }> {
  const { sampleWithSet } = await import('../../webhook/sample.js');
  const { event, body, problems } = sampleWithSet(name, ctx.now(), set);
  for (const p of problems) ctx.note(safe`warning: after --set, ${p} (sent as asked)`);
  if (
    name === 'notification.status_changed' &&
    url.protocol !== 'https:' &&
    !/^(127\.|localhost$|\[::1\]$)/.test(url.hostname)
  )
    ctx.note('Note: the service sends notification.status_changed only to https webhook URLs.');
  return { event, body };
}

interface Delivery {
  name: EventName;
  event: Record<string, unknown>;
  body: Buffer;
  url: URL;
  signed: () => Array<[string, string]>;
  signedWithSecret: boolean;
}

/** Posts the delivery `times` times; a table line per delivery as it is made. */
async function deliverAll(
  ctx: Context,
  d: Delivery,
  times: number,
  format: OutputFormat,
): Promise<{ results: Array<Record<string, unknown>>; failed: string | undefined }> {
  const { deliver } = await import('../../webhook/deliver.js');
  const { name, event, url } = d;
  // The id as sent, whatever --set made it: JSON reports the value itself, the table its JSON text.
  const autoBook = name === 'referral.auto_book_completed';
  const sentId = autoBook ? (event.auto_book_request as { id?: unknown } | null)?.id : event.event_id;
  const id = sentId === undefined ? undefined : typeof sentId === 'string' ? sentId : JSON.stringify(sentId);
  const results: Array<Record<string, unknown>> = [];
  let failed: string | undefined;
  for (let n = 1; n <= times; n++) {
    const r = await deliver(url, Object.fromEntries(d.signed()), d.body, {
      timeoutMs: ctx.globals.timeout ?? 30_000,
      signal: ctx.signal,
    });
    const ok = r.status !== undefined && r.status >= 200 && r.status < 300;
    const head = r.status === undefined ? undefined : `${r.status}${r.statusText ? ` ${r.statusText}` : ''}`;
    results.push({
      event: name,
      event_id: event.event_id ?? null,
      ...(autoBook ? { auto_book_request_id: sentId ?? null } : {}),
      url: url.href,
      delivery: n,
      signed: d.signedWithSecret,
      status: r.status ?? null,
      status_text: r.statusText ?? null,
      ms: r.ms,
      ok,
      error: r.error ?? null,
      note: r.note ?? null,
    });
    if (format === 'table') {
      const answer = head ?? `no answer: ${r.error}`;
      const which =
        times > 1
          ? ` (delivery ${n} of ${times}, same ${autoBook ? 'auto_book_request.id' : 'event_id'})`
          : '';
      const note = r.note ? ` (note: ${r.note})` : '';
      ctx.out.line(
        safe`${ok ? 'delivered' : 'FAILED   '}  ${name}  ${autoBook ? 'auto-book' : 'event'} ${id ?? '-'}  -> ${url.href}  ${answer}  in ${r.ms} ms${which}${note}`,
      );
    }
    if (!ok && !failed) {
      const why = r.start ? receiverReason(r.start) : undefined;
      failed = head
        ? `the receiver answered ${head}, not a 2xx${why ? `: ${why}` : ''}`
        : `no answer from ${url.href}: ${r.error}`;
    }
  }
  return { results, failed };
}

/** A receiver's words with the signing secret taken out, in each form it is written (raw, base64, whsec_). */
function withoutSecret(text: string, secret: { key: Buffer; text: string }): string {
  const { key } = secret;
  const forms = [
    secret.text,
    key.toString('utf8'),
    key.toString('base64'),
    `whsec_${key.toString('base64')}`,
  ];
  return forms
    .filter((form) => form.length >= 8)
    .sort((a, b) => b.length - a.length)
    .reduce((t, form) => t.split(form).join('[redacted]'), text);
}

/** What a refusing receiver said: a JSON error's message, else the body's first line (shortened). */
function receiverReason(start: Buffer): string | undefined {
  const text = start.toString('utf8');
  let said: unknown;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    said = [body.error, body.message, body.reason, body.detail].find((v) => typeof v === 'string');
  } catch {
    said = text.split(/\r?\n/).find((line) => line.trim() !== '');
  }
  if (typeof said !== 'string' || said.trim() === '' || /^\s*</.test(said)) return undefined;
  const line = said.trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
