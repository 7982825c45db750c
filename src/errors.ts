import type { IncomingHttpHeaders } from 'node:http';
import { clean } from './output/text.js';

/** Error classes and the one mapping from failures to exit codes (see the CLI contract). */

export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  forbidden: 5,
  limit: 6,
  rejected: 7,
  webhook: 8,
  notYet: 9,
  cannotHappen: 10,
  interrupted: 130,
  terminated: 143,
} as const;

/** Any failure the user should see as a clear message, with the exit code it maps to. */
export class CliError extends Error {
  readonly exitCode: number;
  /** A second line telling the user what to do next. */
  readonly hint: string | undefined;
  constructor(message: string, exitCode: number = ExitCode.failure, hint?: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.hint = hint;
  }
}

/** Bad flag, argument or input, found before any request. */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.usage, hint);
    this.name = 'UsageError';
  }
}

/** No token configured (or one that cannot be used), found before any request. */
export class AuthError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.auth, hint);
    this.name = 'AuthError';
  }
}

/** Connection refused, reset, DNS failure: the request did not get an HTTP answer. */
export class NetworkError extends CliError {
  readonly url: string;
  readonly code: string | undefined;
  constructor(message: string, url: string, code?: string, hint?: string) {
    super(message, ExitCode.failure, hint);
    this.name = 'NetworkError';
    this.url = url;
    this.code = code;
  }
}

export class TimeoutError extends CliError {
  readonly url: string;
  readonly ms: number;
  constructor(url: string, ms: number, tries = 1) {
    super(
      `request timed out after ${ms} ms${tries > 1 ? `, each of ${tries} tries` : ''}: ${url}`,
      ExitCode.failure,
      'Raise the limit with --timeout <ms> (or a duration: 60s).',
    );
    this.name = 'TimeoutError';
    this.url = url;
    this.ms = ms;
  }

  /** The same timeout, saying how many tries the retry policy made (the wait was that many limits). */
  tried(tries: number): TimeoutError {
    return tries > 1 ? new TimeoutError(this.url, this.ms, tries) : this;
  }
}

// Every catchable signal whose default ends the process, but SIGUSR1 and SIGPROF (Node's and V8's), SIGPIPE
// and SIGXFSZ (errors instead: EPIPE, EFBIG) and the faults.
const STOPPING = [
  'SIGHUP',
  'SIGINT',
  'SIGQUIT',
  'SIGTERM',
  'SIGUSR2',
  'SIGALRM',
  'SIGVTALRM',
  'SIGXCPU',
  'SIGSTKFLT',
  'SIGIO',
  'SIGPWR',
] as const;
export type StopSignal = (typeof STOPPING)[number];
// A handler for a signal this system lacks is never called.
export const STOP_SIGNALS: readonly StopSignal[] = STOPPING;

/** 128 + the signal's number on this system, the exit code of a run it stopped (130 for SIGINT). */
export function stopExitCode(signal: StopSignal): number {
  const n = (process.getBuiltinModule('node:os').constants.signals as Record<string, number | undefined>)[
    signal
  ];
  return n === undefined ? ExitCode.failure : 128 + n;
}

/** The run was stopped by a signal; carries 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP), 131 (SIGQUIT). */
export class InterruptedError extends CliError {
  readonly signal: StopSignal;
  /** The command already said how it stopped; print nothing more. */
  readonly quiet: boolean;
  constructor(signal: StopSignal = 'SIGINT', quiet = false) {
    super('interrupted', stopExitCode(signal));
    this.name = 'InterruptedError';
    this.signal = signal;
    this.quiet = quiet;
  }
}

/** A 2xx answer that is not JSON at all (cut short, a proxy's HTML page), after the client's own retries. */
export class NotJsonError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, ExitCode.failure, hint);
    this.name = 'NotJsonError';
  }
}

// A 2xx answer whose shape the tool cannot use (a list where text was expected, an object where a list was,
// JSON nested absurdly deep).
export class UnreadableAnswerError extends CliError {
  readonly where: string;
  readonly requestId: string | undefined;
  /** `hint`: in place of the general one, where --json cannot show the answer either. */
  constructor(where: string, requestId?: string, hint?: string) {
    super(
      `the server sent an answer this tool cannot read: ${where}`,
      ExitCode.failure,
      hint ??
        "This is a problem with the server's answer, not with your command; quote the request id if you report it (--json shows the answer as sent where it can).",
    );
    this.name = 'UnreadableAnswerError';
    this.where = where;
    // A request id is the server's text: printable ASCII only, so it cannot carry terminal escapes.
    this.requestId = requestId?.replace(/[^\x21-\x7e]/g, '?').slice(0, 200);
  }
  /** The same error, with the request id of the answer it was found in. */
  withRequestId(requestId: string | undefined): UnreadableAnswerError {
    if (this.requestId || !requestId) return this;
    return new UnreadableAnswerError(this.where, requestId, this.hint);
  }
}

export interface ApiErrorDetails {
  status: number;
  method: string;
  url: string;
  /** The answer's headers, for `api -i` (shown through the sanitiser, never in the error block). */
  headers?: IncomingHttpHeaders | undefined;
  code?: string | undefined;
  type?: string | undefined;
  message?: string | undefined;
  errors?: string[] | undefined;
  requestId?: string | undefined;
  documentationUrl?: string | undefined;
  /** What was wrong with the body itself (HTML page, truncated JSON), when it was not an envelope. */
  bodyNote?: string | undefined;
  retryAfterSeconds?: number | undefined;
  /** The sandbox allowance meter's view, on a 429 sandbox_request_limit_reached or 401 api_token_expired. */
  allowance?: string | undefined;
  /** Where the token sent came from, when known (the 401 hint says what to do about it). */
  token?: TokenOrigin | undefined;
}

/** Exit code for an HTTP error status, per the contract's table. */
export function exitCodeForStatus(status: number): number {
  if (status === 401) return ExitCode.auth;
  if (status === 403) return ExitCode.forbidden;
  if (status === 404) return ExitCode.notFound;
  if (status === 429) return ExitCode.limit;
  if (status === 400 || status === 422) return ExitCode.rejected;
  // A method the path does not take is no refusal of the request's content: "anything unexpected".
  if (status === 405) return ExitCode.failure;
  if (status >= 400 && status < 500) return ExitCode.rejected;
  return ExitCode.failure;
}

/** Where the token an answer refused came from: `IMAGING_TOKEN` (auth login cannot help) or the store. */
export interface TokenOrigin {
  source: string;
  env: string;
}

/** The one hint for a refused token (401), in the words of where that token came from. */
function refusedTokenHint(code: string | undefined, token?: TokenOrigin): string {
  const fromEnv = token?.source === 'IMAGING_TOKEN';
  const login = `imaging auth login${token && token.env !== 'sandbox' ? ` --env ${token.env}` : ''}`;
  if (code === 'api_token_expired')
    return fromEnv
      ? 'The sandbox token has expired (the one in IMAGING_TOKEN). Request an extension or a new token, then set IMAGING_TOKEN to it.'
      : `The sandbox token has expired. Request an extension or a new token, then run: ${login}`;
  if (fromEnv)
    return `The token in IMAGING_TOKEN was refused (while it is set, a stored token is not used and auth login cannot help). Check that it belongs to the ${token.env} environment (a sandbox token fails on production), then set IMAGING_TOKEN to the right one or unset it.`;
  return `The ${token?.source === 'config' ? `stored ${token.env} token` : 'token'} was refused. Check that it belongs to this environment (a sandbox token fails on production), or log in again: ${login}`;
}

/** A feature the account has not been given, as a command names it (the referral's payments). */
interface GatedFeature {
  /** "Reading a referral's payments ("payment read" in the API)" */
  what: string;
  /** The name to ask for: "payment read". */
  name: string;
  /** The other features enabled the same way. */
  others: string;
  env: string;
}

/** The one hint for a 403 (endpoint_not_enabled): what is off, and whom to ask. */
export function notEnabledHint(feature?: GatedFeature): string {
  return `${feature?.what ?? 'This endpoint'} is enabled per account, and is off until then${feature ? ` (as are ${feature.others})` : ''}. Ask the service's API support contact, or your account manager, to enable ${feature ? `${feature.name} for your group on ${feature.env}` : 'it for your group'} (each environment, sandbox and production, is enabled separately).`;
}

const SANDBOX_LIMIT_HINT =
  'The sandbox allowance of successful requests is used up. It is a quota, not a rate: waiting will not help. Request an extended token.';

/** When a rate-limited request may be sent again: the wait the server asked for, and the time it ends. */
function retryAfterHint(seconds: number, now = Date.now()): string {
  const wait =
    seconds < 120
      ? `${seconds} s`
      : seconds < 7200
        ? `${Math.round(seconds / 60)} min`
        : seconds < 172_800
          ? `${Math.round(seconds / 3600)} h`
          : `${Math.round(seconds / 86_400)} days`;
  const end = new Date(now + seconds * 1000);
  const when = Number.isNaN(end.getTime())
    ? ''
    : ` (${end.toISOString().slice(0, 16).replace('T', ' ')} UTC)`;
  return `The server is rate limiting and asks for a pause of ${wait}: try again after that${when}.`;
}

/** An HTTP error answer from the API, with everything a person needs to report it. */
export class ApiError extends CliError {
  readonly details: ApiErrorDetails;
  /** `hint` replaces the usual one, for a command that knows better what to do next. */
  constructor(details: ApiErrorDetails, hintOverride?: string) {
    const what = details.message ?? details.bodyNote ?? `HTTP ${details.status}`;
    let hint = hintOverride;
    if (!hint && (details.status === 401 || details.code === 'api_token_expired'))
      hint = refusedTokenHint(details.code, details.token);
    if (!hint && (details.status === 403 || details.code === 'endpoint_not_enabled')) hint = notEnabledHint();
    if (!hint && details.code === 'sandbox_request_limit_reached') hint = SANDBOX_LIMIT_HINT;
    if (!hint && details.status === 429 && details.retryAfterSeconds !== undefined)
      hint = retryAfterHint(details.retryAfterSeconds);
    if (!hint && details.status >= 500)
      hint = 'The server failed. Try again later; quote the request id if you contact support.';
    super(what, exitCodeForStatus(details.status), hint);
    this.name = 'ApiError';
    this.details = details;
    this.hintOverridden = hintOverride !== undefined;
  }
  /** Whether a command gave its own hint. */
  readonly hintOverridden: boolean;
  /** The same error, its hint in the words of where the refused token came from. */
  withToken(token: TokenOrigin): ApiError {
    if (this.hintOverridden || this.details.token) return this;
    return new ApiError({ ...this.details, token });
  }
  get status(): number {
    return this.details.status;
  }
  get code(): string | undefined {
    return this.details.code;
  }
  get requestId(): string | undefined {
    return this.details.requestId;
  }
}

/** The one readable block for any error. */
export function formatError(err: unknown, opts: { verbose?: boolean } = {}): string {
  // Server text (message, code, errors, request id, links) and any message that quotes it are
  // cleaned value by value, so each stays on its line and no escape reaches the terminal.
  const c = clean;
  const lines: string[] = [];
  const hint = (h: string | undefined) => {
    if (h) lines.push(`hint: ${h.split('\n').map(c).join('\n')}`);
  };
  if (err instanceof ApiError) {
    const d = err.details;
    const statusText = httpStatusText(d.status);
    lines.push(`error: ${c(d.message ?? d.bodyNote ?? statusText)}`);
    lines.push(`  status:     ${d.status}${statusText ? ` ${statusText}` : ''}`);
    if (d.code) lines.push(`  code:       ${c(d.code)}${d.type ? ` (${c(d.type)})` : ''}`);
    if (d.message && d.bodyNote) lines.push(`  note:       ${c(d.bodyNote)}`);
    if (d.errors && d.errors.length > 0) {
      lines.push('  errors:');
      for (const e of d.errors) lines.push(`    - ${c(e)}`);
    }
    lines.push(`  request:    ${d.method} ${c(d.url)}`);
    if (d.requestId) lines.push(`  request id: ${c(d.requestId)}`);
    if (d.retryAfterSeconds !== undefined) lines.push(`  retry after: ${d.retryAfterSeconds} s`);
    if (d.documentationUrl) lines.push(`  docs:       ${c(d.documentationUrl)}`);
    if (d.allowance) lines.push(`  allowance:  ${c(d.allowance)}`);
    hint(err.hint);
    return lines.join('\n');
  }
  if (err instanceof UnreadableAnswerError) {
    lines.push(`error: ${err.message}`);
    lines.push(
      `  request id: ${err.requestId ?? 'not known (--verbose shows the request id of each answer)'}`,
    );
    if (err.hint) lines.push(`hint: ${err.hint}`);
    return lines.join('\n');
  }
  if (err instanceof CliError) {
    lines.push(`error: ${c(err.message)}`);
    hint(err.hint);
    return lines.join('\n');
  }
  const message = err instanceof Error ? err.message : String(err);
  lines.push(`error: unexpected failure: ${c(message)}`);
  if (opts.verbose && err instanceof Error && err.stack) lines.push(...err.stack.split('\n').map(c));
  else lines.push('hint: run again with --verbose for details.');
  return lines.join('\n');
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  return ExitCode.failure;
}

function httpStatusText(status: number): string {
  return process.getBuiltinModule('node:http').STATUS_CODES[status] ?? '';
}
