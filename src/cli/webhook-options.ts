import { UsageError } from '../errors.js';
import { joinSafe, type SafeText, safe, style } from '../output/text.js';
import { DEFAULT_HEADERS, type DigestEncoding, type HeaderNames } from '../webhook/sign.js';
import type { Verdict } from '../webhook/verify.js';
import { completes, file, text } from './options.js';

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
  const names = {
    event: check('--event-header', opts.eventHeader, DEFAULT_HEADERS.event),
    timestamp: check('--timestamp-header', opts.timestampHeader, DEFAULT_HEADERS.timestamp),
    signature: check('--signature-header', opts.signatureHeader, DEFAULT_HEADERS.signature),
  };
  // Header names are case-insensitive: two roles under one name would send one header for another.
  const flags = [
    ['--event-header', names.event],
    ['--timestamp-header', names.timestamp],
    ['--signature-header', names.signature],
  ] as const;
  for (const [i, [flag, name]] of flags.entries()) {
    if (RESERVED_HEADERS.includes(name.toLowerCase()))
      throw new UsageError(
        `${flag}: "${name}" is a header the HTTP request itself carries`,
        `Pick another name; these are taken: ${RESERVED_HEADERS.join(', ')}.`,
      );
    const other = flags.slice(0, i).find(([, n]) => n.toLowerCase() === name.toLowerCase());
    if (other)
      throw new UsageError(
        `${flag} and ${other[0]} are the same header ("${name}"${name === other[1] ? '' : ` and "${other[1]}"`}; header names ignore case)`,
        'The event, timestamp and signature headers need three different names.',
      );
  }
  return names;
}

/** Headers the request carries for itself (or `webhook send` sets): no role may take their name. */
const RESERVED_HEADERS = [
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'user-agent',
];

export function parseEncoding(value: string | undefined, allowAuto: boolean): DigestEncoding | 'auto' {
  const v = (value ?? (allowAuto ? 'auto' : 'hex')).toLowerCase();
  if (v === 'hex' || v === 'base64' || (allowAuto && v === 'auto')) return v;
  throw new UsageError(
    `--encoding: unknown encoding "${value}"`,
    `Use ${allowAuto ? 'auto, ' : ''}hex or base64.`,
  );
}

/** What checking a delivery reads from the options (webhook verify, webhook listen), before anything else. */
export function checkOptions(opts: HeaderNameOpts & { encoding?: string; tolerance?: string }): {
  names: HeaderNames;
  encoding: DigestEncoding | 'auto';
  tolerance: number | undefined;
} {
  return {
    names: headerNames(opts),
    encoding: parseEncoding(opts.encoding, true),
    tolerance: parseSeconds('--tolerance', opts.tolerance),
  };
}

export function parseSeconds(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()))
    throw new UsageError(`${flag} must be a whole number of seconds, not "${value}"`);
  return Number(value.trim());
}

export function parseHeaderFlag(value: string): [string, string] {
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
  // Every line quotes the delivery, so each is cleaned to one line by safe`…`.
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

/** POSIX shell single-quoting: exact bytes, nothing expanded. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** --encoding of the commands that check a signature: auto accepts either. */
export const ENCODING_OPTION = completes(
  text('--encoding <encoding>', 'digest text: auto (default), hex or base64'),
  ['auto', 'hex', 'base64'],
);

/** The secret and header-name options every webhook command takes. */
export const HEADER_OPTIONS = {
  secretFile: file(
    '--secret-file <file>',
    'signing secret from a file (else IMAGING_WEBHOOK_SECRET, else a prompt)',
  ),
  secretFormat: completes(
    text('--secret-format <format>', 'raw (the UTF-8 bytes, default) or base64 (whsec_ prefix allowed)'),
    ['raw', 'base64'],
  ),
  eventHeader: text('--event-header <name>', 'event header name (default X-Service-Event)'),
  timestampHeader: text('--timestamp-header <name>', 'timestamp header name (default X-Service-Timestamp)'),
  signatureHeader: text('--signature-header <name>', 'signature header name (default X-Service-Signature)'),
};
