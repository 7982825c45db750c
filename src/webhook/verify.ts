import { headerOf } from './capture.js';
import { checkEvent, type EventSummary, UNSIGNED_BY_DESIGN } from './events.js';
import { type Secret, secretKey } from './secret.js';
import { computeDigest, type DigestEncoding, type HeaderNames, matchDigest, v1Values } from './sign.js';

/** A receiver's usual tolerance (seconds): older or future timestamps are flagged without --tolerance. */
const REPLAY_WINDOW = 300;

interface VerifyInput {
  headers: Array<[string, string]>;
  body: Buffer;
  secret: Secret;
  encoding: DigestEncoding | 'auto';
  tolerance?: number | undefined;
  now: number;
  names: HeaderNames;
  allowUnsigned: boolean;
  /** From the capture parser: how the capture was saved (line endings, a short body). */
  captureNotes?: string[];
}

export interface Verdict {
  valid: boolean;
  signature: 'valid' | 'invalid' | 'missing' | 'unsigned';
  encoding: DigestEncoding | null;
  event: string | null;
  event_id: string | null;
  timestamp: number | null;
  age_seconds: number | null;
  problems: string[];
  causes: string[];
  warnings: string[];
  headline: string;
  summary: EventSummary;
}

export function verifyDelivery(input: VerifyInput): Verdict {
  const { names, body } = input;
  const sigHeader = headerOf(input.headers, names.signature);
  const tsHeader = headerOf(input.headers, names.timestamp);
  const evHeader = headerOf(input.headers, names.event);
  const event = checkEvent(evHeader, body);
  const problems: string[] = [];
  const causes: string[] = [];
  const warnings = [...input.secret.warnings, ...event.warnings];
  const v: Verdict = {
    valid: false,
    signature: 'missing',
    encoding: null,
    event: event.summary.event ?? null,
    event_id: event.summary.eventId ?? null,
    timestamp: null,
    age_seconds: null,
    problems,
    causes,
    warnings,
    headline: '',
    summary: event.summary,
  };

  const timestampOk = tsHeader === undefined || checkTimestamp(input, tsHeader, v);
  checkSignature(input, sigHeader, tsHeader, v);

  problems.push(...event.problems);
  const signatureOk = v.signature === 'valid' || (v.signature === 'unsigned' && problems.length === 0);
  v.valid = signatureOk && timestampOk && problems.length === 0;
  v.headline = headline(v, input.tolerance);
  return v;
}

function checkTimestamp(input: VerifyInput, tsHeader: string, v: Verdict): boolean {
  const t = tsHeader.trim();
  if (!/^\d+$/.test(t)) {
    v.problems.push(`the timestamp "${tsHeader}" is not a whole number of seconds`);
    return false;
  }
  v.timestamp = Number(t);
  if (t.length >= 13) v.warnings.push('the timestamp looks like milliseconds, not seconds');
  v.age_seconds = input.now - v.timestamp;
  if (input.tolerance !== undefined && Math.abs(v.age_seconds) > input.tolerance) {
    v.problems.push(
      `the timestamp is ${describeAge(v.age_seconds)}, beyond --tolerance ${input.tolerance} s`,
    );
    return false;
  }
  if (input.tolerance === undefined && (v.age_seconds > REPLAY_WINDOW || v.age_seconds < 0)) {
    // Captured requests are old, so without --tolerance the age does not fail the check; but a
    // replayed or forged delivery must not pass unnoticed.
    v.warnings.push(
      `the timestamp is ${describeAge(v.age_seconds)}${v.age_seconds < 0 ? '' : `, older than ${REPLAY_WINDOW / 60} minutes`}: a receiver would refuse it as a possible replay (check it with --tolerance ${REPLAY_WINDOW})`,
    );
  }
  return true;
}

function checkSignature(
  input: VerifyInput,
  sigHeader: string | undefined,
  tsHeader: string | undefined,
  v: Verdict,
): void {
  const { names } = input;
  if (sigHeader === undefined && tsHeader === undefined) {
    v.signature = 'unsigned';
    const autoBook = v.summary.event === UNSIGNED_BY_DESIGN;
    if (autoBook && input.allowUnsigned) return;
    v.problems.push(`there is no ${names.signature} or ${names.timestamp} header`);
    v.causes.push(
      autoBook
        ? `${UNSIGNED_BY_DESIGN} sent to a per-request webhook_url is unsigned by design; --allow-unsigned accepts exactly that case`
        : `only ${UNSIGNED_BY_DESIGN} sent to a per-request webhook_url is unsigned by design; this delivery should have been signed`,
    );
    const lookalike = input.headers.find(([k, val]) => /signature|timestamp/i.test(k) || /^v1=/.test(val));
    if (lookalike)
      v.causes.push(
        `there is a "${lookalike[0]}" header: if that is the real name, pass it with --signature-header / --timestamp-header`,
      );
    return;
  }
  if (sigHeader === undefined) {
    v.problems.push(`the ${names.signature} header is missing`);
    return;
  }
  if (tsHeader === undefined) {
    v.problems.push(`the ${names.timestamp} header is missing, so the signature cannot be checked`);
    v.signature = 'invalid';
    return;
  }
  const candidates = v1Values(sigHeader);
  const ts = tsHeader.trim();
  const digest = computeDigest(input.secret.key, ts, input.body);
  v.signature = 'invalid';
  if (candidates.length === 0) {
    v.problems.push(`the ${names.signature} header has no v1= value`);
    return;
  }
  for (const c of candidates) {
    const enc = matchDigest(c, digest, input.encoding);
    if (enc) {
      v.signature = 'valid';
      v.encoding = enc;
      return;
    }
  }
  v.problems.push(
    candidates.length > 1
      ? `none of the ${candidates.length} v1= signatures matches`
      : 'the signature does not match',
  );
  v.causes.push(...diagnose(input, ts, candidates));
}

function diagnose(input: VerifyInput, ts: string, candidates: string[]): string[] {
  const matches = (key: Buffer, body: Buffer) => {
    const d = computeDigest(key, ts, body);
    return candidates.some((c) => matchDigest(c, d, 'auto') !== undefined);
  };
  const { body, secret } = input;
  if (input.encoding !== 'auto' && matches(secret.key, body))
    return [`the signature is not ${input.encoding}: it matches in the other encoding (use --encoding auto)`];
  const cause =
    bodyVariants(body.toString('utf8')).find(([, form]) => matches(secret.key, Buffer.from(form)))?.[0] ??
    secretVariants(secret).find(([, make]) => {
      try {
        return matches(make(), body);
      } catch {
        return false;
      }
    })?.[0];
  if (cause) return [cause];
  const causes = [
    'the secret is wrong (each environment, and each group, has its own), or the body or timestamp changed on the way (a proxy or logging middleware re-encoding JSON)',
  ];
  for (const note of input.captureNotes ?? []) {
    if (/line|shorter|ignored/.test(note)) causes.push(`about the capture: ${note}`);
  }
  return causes;
}

/** The body as it may have been before someone parsed and re-encoded it, or an editor saved it. */
function bodyVariants(text: string): Array<[string, string]> {
  const variants: Array<[string, string]> = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (parsed !== undefined) {
    for (const [label, form] of [
      ['compact', JSON.stringify(parsed)],
      ['indented', JSON.stringify(parsed, null, 2)],
      ['indented', JSON.stringify(parsed, null, 4)],
    ] as const) {
      if (form !== text)
        variants.push([
          `the body was re-serialised: the signature matches its ${label} JSON form. Verify the raw bytes as received, not JSON parsed and encoded again`,
          form,
        ]);
    }
  }
  if (text.includes('\r\n'))
    variants.push(['line endings in the body were changed from LF to CRLF', text.replace(/\r\n/g, '\n')]);
  else if (text.includes('\n'))
    variants.push(['line endings in the body were changed from CRLF to LF', text.replace(/\n/g, '\r\n')]);
  if (/\r?\n$/.test(text))
    variants.push([
      'a newline was added at the end of the body (an editor saving the capture?)',
      text.replace(/\r?\n$/, ''),
    ]);
  else variants.push(['the newline at the end of the body was lost', `${text}\n`]);
  return variants;
}

function secretVariants(secret: Secret): Array<[string, () => Buffer]> {
  const variants: Array<[string, () => Buffer]> = [];
  if (secret.text.trim() !== secret.text)
    variants.push([
      'the secret has stray white space: without it, the signature matches',
      () => secretKey(secret.text.trim(), secret.format),
    ]);
  variants.push([
    'the secret had a trailing newline that was dropped; with it, the signature matches',
    () => Buffer.from(`${secret.text}\n`),
  ]);
  variants.push(
    secret.format === 'raw'
      ? ['the secret is base64-encoded: use --secret-format base64', () => secretKey(secret.text, 'base64')]
      : ['the secret is meant as its text: use --secret-format raw', () => secretKey(secret.text, 'raw')],
  );
  return variants;
}

function headline(v: Verdict, tolerance: number | undefined): string {
  const age = v.age_seconds === null ? '' : `timestamp ${describeAge(v.age_seconds)}`;
  const tooOld = tolerance !== undefined && v.age_seconds !== null && Math.abs(v.age_seconds) > tolerance;
  if (v.signature === 'valid') {
    const sig = `signature valid (${v.encoding})`;
    if (v.timestamp === null) return `${sig}, but the timestamp is not a number`;
    if (tooOld) return `${sig}, but ${age}, beyond --tolerance ${tolerance} s`;
    if (!v.valid) return `${sig}, ${age}, but the event is not as the spec describes`;
    return `${sig}, ${age}`;
  }
  if (v.signature === 'unsigned')
    return v.valid ? `unsigned ${UNSIGNED_BY_DESIGN}, accepted with --allow-unsigned` : 'unsigned delivery';
  if (v.signature === 'missing') return 'no signature header';
  return `signature does not match${age ? ` (${age})` : ''}`;
}

export function describeAge(seconds: number): string {
  const s = Math.abs(seconds);
  let text: string;
  if (s < 120) text = `${s} s`;
  else if (s < 7200) text = `${Math.round(s / 60)} min`;
  else if (s < 172_800) text = `${Math.round(s / 3600)} h`;
  else text = `${Math.round(s / 86_400)} days`;
  return seconds >= 0 ? `${text} old` : `${text} in the future`;
}
