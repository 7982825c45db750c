import type { Context, GlobalOptions } from '../context.js';
import { CliError, ExitCode, UsageError } from '../errors.js';
import { joinSafe, type SafeText, safe, style } from '../output/text.js';
import { requireHttpUrl } from '../util/args.js';
import { readInput } from '../util/input.js';
import { CaptureError, parseCapture } from '../webhook/capture.js';
import { loadSecret, type SecretOptions } from '../webhook/secret.js';
import {
  DEFAULT_HEADERS,
  type DigestEncoding,
  type HeaderNames,
  signatureHeaderValue,
} from '../webhook/sign.js';
import { type Verdict, verifyDelivery } from '../webhook/verify.js';

/** The largest capture or body read (a webhook body is a referral snapshot: tens of KB). */
export const MAX_WEBHOOK_BYTES = 5 * 1024 * 1024;

interface HeaderNameOpts {
  eventHeader?: string;
  timestampHeader?: string;
  signatureHeader?: string;
}

export function headerNames(opts: HeaderNameOpts): HeaderNames {
  const check = (flag: string, v: string | undefined, def: string) => {
    if (v === undefined) return def;
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(v))
      throw new UsageError(`${flag}: "${v}" is not a header name`);
    return v;
  };
  return {
    event: check('--event-header', opts.eventHeader, DEFAULT_HEADERS.event),
    timestamp: check('--timestamp-header', opts.timestampHeader, DEFAULT_HEADERS.timestamp),
    signature: check('--signature-header', opts.signatureHeader, DEFAULT_HEADERS.signature),
  };
}

export function parseEncoding(value: string | undefined, allowAuto: boolean): DigestEncoding | 'auto' {
  const v = (value ?? (allowAuto ? 'auto' : 'hex')).toLowerCase();
  if (v === 'hex' || v === 'base64' || (allowAuto && v === 'auto')) return v;
  throw new UsageError(
    `--encoding: unknown encoding "${value}"`,
    `Use ${allowAuto ? 'auto, ' : ''}hex or base64.`,
  );
}

export function parseSeconds(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()))
    throw new UsageError(`${flag} must be a whole number of seconds, not "${value}"`);
  return Number(value.trim());
}

export interface VerifyOpts extends GlobalOptions, HeaderNameOpts, SecretOptions {
  request?: string;
  body?: string;
  header?: string[];
  encoding?: string;
  tolerance?: string;
  allowUnsigned?: boolean;
}

export async function verify(ctx: Context, opts: VerifyOpts): Promise<number> {
  const names = headerNames(opts);
  const encoding = parseEncoding(opts.encoding, true);
  const tolerance = parseSeconds('--tolerance', opts.tolerance);
  const format = ctx.format('table', ['table', 'json']);
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
  if (format === 'json') ctx.io.stdout.write(`${JSON.stringify(verdictJson(verdict), null, 2)}\n`);
  else ctx.out.write(renderVerdict(verdict, ctx.colorLevel() > 0));
  return verdict.valid ? ExitCode.ok : ExitCode.webhook;
}

function parseHeaderFlag(value: string): [string, string] {
  const i = value.indexOf(':');
  const name = i > 0 ? value.slice(0, i).trim() : '';
  if (!name || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
    throw new UsageError(`--header: expected "Name: value", not "${value}"`);
  return [name, value.slice(i + 1).trim()];
}

export function verdictJson(v: Verdict) {
  return {
    valid: v.valid,
    encoding: v.encoding,
    event: v.event,
    event_id: v.event_id,
    timestamp: v.timestamp,
    age_seconds: v.age_seconds,
    problems: v.problems,
    signature: v.signature,
    likely_causes: v.causes,
    warnings: v.warnings,
  };
}

/** One-line verdict, the event summary, then one line per problem and the likely causes. */
export function renderVerdict(v: Verdict, color: boolean): SafeText {
  // Headline, summary, problems and causes quote the delivery (event names, ids, headers): each
  // line is cleaned by safe`…` to one line with escapes visible.
  const verdict = v.valid ? style('green', 'valid', color) : style('red', 'NOT valid', color);
  const lines = [safe`${verdict}: ${v.headline}`];
  const summary = summaryLine(v);
  if (summary) lines.push(safe`  ${summary}`);
  for (const p of v.problems) lines.push(safe`  - ${p}`);
  for (const c of v.causes) lines.push(safe`  likely cause: ${c}`);
  return safe`${joinSafe(lines, '\n')}\n`;
}

export function summaryLine(v: Verdict): string {
  const s = v.summary;
  return [
    s.event,
    s.eventId ? `event ${s.eventId}` : s.id ? `auto-book ${s.id}` : undefined,
    s.visitId ? `visit ${s.visitId}` : undefined,
    s.notification ? `notification ${s.notification}` : undefined,
    s.outcome ? `outcome ${s.outcome}` : undefined,
    s.reference ? `referral ${s.reference}` : undefined,
    s.change,
  ]
    .filter(Boolean)
    .join('  ');
}

export interface SignOpts extends GlobalOptions, HeaderNameOpts, SecretOptions {
  body?: string;
  timestamp?: string;
  event?: string;
  encoding?: string;
  curl?: string;
}

/** Prints the three headers a signed delivery carries, for partners testing their receivers. */
export async function sign(ctx: Context, opts: SignOpts): Promise<number> {
  const names = headerNames(opts);
  const encoding = parseEncoding(opts.encoding, false) as DigestEncoding;
  const format = ctx.format('table', ['table', 'json']);
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
  if (!event) throw new UsageError('no event name: the body has no event_name', 'Give it with --event NAME.');
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
    ctx.io.stdout.write(
      `${JSON.stringify({ event, timestamp, signature, encoding, headers: Object.fromEntries(headers) }, null, 2)}\n`,
    );
  } else {
    for (const [k, v] of headers) ctx.out.line(safe`${k}: ${v}`);
  }
  return 0;
}

/** POSIX shell single-quoting: exact bytes, nothing expanded. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface ListenOpts extends GlobalOptions, HeaderNameOpts, SecretOptions {
  port?: number;
  path?: string;
  forwardTo?: string;
  tolerance?: string;
  encoding?: string;
  allowUnsigned?: boolean;
}

/** Runs a local receiver until Ctrl-C / SIGTERM; one line per delivery on stdout (NDJSON with --json). */
export async function listen(ctx: Context, opts: ListenOpts): Promise<number> {
  const names = headerNames(opts);
  const encoding = parseEncoding(opts.encoding, true);
  const tolerance = parseSeconds('--tolerance', opts.tolerance) ?? 300;
  const format = ctx.format('table', ['table', 'json', 'ndjson']);
  if (opts.path !== undefined && !opts.path.startsWith('/'))
    throw new UsageError(`--path must start with /, not "${opts.path}"`);
  if (opts.forwardTo !== undefined) requireHttpUrl('--forward-to', opts.forwardTo);
  const secret = await loadSecret(ctx, opts);
  for (const w of secret.warnings) ctx.note(safe`warning: ${w}`);
  const { startListener } = await import('../webhook/listener.js');
  const { InterruptedError } = await import('../errors.js');
  let listener: Awaited<ReturnType<typeof startListener>>;
  try {
    listener = await startListener({
      port: opts.port ?? 4030,
      path: opts.path,
      forwardTo: opts.forwardTo,
      tolerance,
      secret,
      encoding,
      names,
      allowUnsigned: Boolean(opts.allowUnsigned),
      maxBodyBytes: MAX_WEBHOOK_BYTES,
      now: () => ctx.now().getTime(),
      onDelivery: (d) => {
        if (format === 'table') {
          const time = d.receivedAt.slice(11, 19);
          const state = d.verdict.valid ? 'valid  ' : 'INVALID';
          const detail = d.verdict.valid
            ? summaryLine(d.verdict)
            : `${d.verdict.event ?? '?'}  ${d.verdict.headline}; ${d.verdict.problems.join('; ')}`;
          const extra = [
            d.duplicate ? '(duplicate delivery)' : '',
            d.forwarded !== undefined ? `-> ${d.forwarded}` : '',
          ]
            .filter(Boolean)
            .join('  ');
          // An unsigned request's event name is whatever anyone who reaches the port sent.
          ctx.out.line(safe`${`${time}  ${state}  ${detail}${extra ? `  ${extra}` : ''}`}`);
        } else {
          ctx.io.stdout.write(
            `${JSON.stringify({ received_at: d.receivedAt, path: d.path, ...verdictJson(d.verdict), duplicate: d.duplicate, forwarded_status: d.forwarded ?? null, response_status: d.status })}\n`,
          );
        }
      },
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new CliError(
        `port ${opts.port ?? 4030} is already in use on 127.0.0.1`,
        1,
        'Pick another with --port, or 0 for any free port.',
      );
    }
    throw err;
  }
  ctx.note(
    `Listening for webhooks on ${listener.url} (tolerance ${tolerance} s${opts.forwardTo ? `, forwarding to ${opts.forwardTo}` : ''}; Ctrl-C stops)`,
  );
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await listener.close();
  const c = listener.counts;
  ctx.note(
    `\nStopped. ${c.received} deliveries: ${c.valid} valid, ${c.invalid} not valid, ${c.duplicates} duplicate.`,
  );
  const reason = ctx.signal.reason;
  throw new InterruptedError(reason instanceof InterruptedError ? reason.signal : 'SIGINT', true);
}
