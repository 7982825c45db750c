/** The --verbose trace lines, and the redaction that keeps patient data out of them. */

export type Trace = ((line: string) => void) | undefined;

/** `> GET https://…/api/v2/referrals?page=2&per_page=100` */
export function requestLine(method: string, url: string): string {
  return `> ${method} ${traceUrl(url)}`;
}

/** `< 200 OK 12 ms request-id=req_…` */
export function responseLine(
  status: number,
  reason: string,
  ms: number,
  requestId: string | undefined,
): string {
  return `< ${status} ${reason} ${ms} ms${requestId ? ` request-id=${requestId}` : ''}`.replace('  ', ' ');
}

export function timeoutLine(timeoutMs: number): string {
  return `< timeout after ${timeoutMs} ms`;
}

/** `* HTTP 503; retrying in 225 ms (try 2 of 3)` */
export function retryLine(why: string, delayMs: number, nextAttempt: number, attempts: number): string {
  return `* ${why}; retrying in ${delayMs} ms (try ${nextAttempt} of ${attempts})`;
}

/** `* cache hit (age 12 min): GET https://…/api/v2/cpt_codes?code=73721` (nothing was sent). */
export function cacheHitLine(ageMs: number, url: string): string {
  const s = Math.floor(ageMs / 1000);
  const m = Math.floor(s / 60);
  const age = s < 60 ? `${s} s` : m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
  return `* cache hit (age ${age}): GET ${traceUrl(url)}`;
}

/**
 * Query parameters shown as sent: paging everywhere, and the reference lookups' own (a CPT code, a
 * modality), which carry no patient data. Every other value is redacted on every path: a search, a
 * redirect's target or a signed link may carry a name, a date of birth or a signature.
 */
const SHOWN_EVERYWHERE = new Set(['page', 'per_page']);
const SHOWN_ON: ReadonlyArray<[RegExp, ReadonlySet<string>]> = [
  [/\/cpt_codes$/i, new Set(['code', 'modality'])],
  [/\/body_parts$/i, new Set(['modality'])],
];

/** The URL as a trace or an error shows it: every query value but the allowlisted ones is replaced. */
export function traceUrl(url: string): string {
  const u = new URL(url);
  if (!u.search) return url;
  const here = SHOWN_ON.find(([path]) => path.test(u.pathname.replace(/\/+$/, '')))?.[1];
  const parts = u.search
    .slice(1)
    .split('&')
    .map((pair) => {
      const [k = ''] = pair.split('=');
      let name: string;
      try {
        name = decodeURIComponent(k.replace(/\+/g, ' '));
      } catch {
        return `${k}=[redacted]`;
      }
      return SHOWN_EVERYWHERE.has(name) || here?.has(name) ? pair : `${k}=[redacted]`;
    });
  return `${u.origin}${u.pathname}?${parts.join('&')}`;
}

/**
 * A request id as shown (trace, error block): a short run of id characters, else `[redacted]`, as a
 * server may echo the URL (a patient's name in a search) or other text there.
 */
export function shownRequestId(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  return /^[A-Za-z0-9._:-]{1,128}$/.test(value) ? value : '[redacted]';
}

const REDACTED_TOKEN = '[redacted token]';

/**
 * `text` (server text to be shown: an error body, a reason phrase, a request id) with the token
 * replaced: each of its characters as itself or percent-encoded, with any controls, invisible
 * characters or escape sequences between them. A token shorter than 8 characters is no real
 * token, and replacing it would mangle ordinary words.
 */
export function redactToken(text: string, token: string | undefined): string {
  if (!token || token.length < 8) return text;
  // The token's first character appears as itself or percent-encoded: text with neither has no token.
  if (!text.includes(token[0] as string) && !text.includes('%')) return text;
  // In printable ASCII with no `%` and no `<U+…>` mark, only spaces, tabs and line breaks can stand
  // between the token's characters: text that lacks it even so is returned without running the full
  // pattern (costly, with its Unicode classes).
  if (!/[^\x20-\x7e\n\t]|%|<U\+/.test(text) && !spacedIncludes(text, token)) return text;
  if (tokenPattern?.token !== token) tokenPattern = { token, re: patternOf(token) };
  return text.replace(tokenPattern.re, REDACTED_TOKEN);
}

/**
 * Whether `text` holds `token` with any spaces, tabs and line breaks between its characters (as
 * `text` without them would include it), read in place: a table is one string of every line.
 */
function spacedIncludes(text: string, token: string): boolean {
  if (/[ \t\n]/.test(token)) return false;
  const first = token[0] as string;
  for (let at = text.indexOf(first); at !== -1; at = text.indexOf(first, at + 1)) {
    let j = 1;
    for (let k = at + 1; j < token.length && k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (c === 32 || c === 9 || c === 10) continue;
      if (c !== token.charCodeAt(j)) break;
      j++;
    }
    if (j === token.length) return true;
  }
  return false;
}

let tokenPattern: { token: string; re: RegExp } | undefined;
// What a terminal hides between two characters, raw or as the sanitiser shows it (`␛`, `<U+200B>`,
// a space): an escape sequence (CSI, OSC, other), a control, a format or default-ignorable character.
const E = String.raw`(?:[\x1b\u241b]|<U\+001B>)`;
const GAP = String.raw`(?:(?:${E}\[|\x9b|<U\+009B>)[0-?]*[ -/]*[@-~]|(?:${E}\]|\x9d|<U\+009D>)[^\x07\u2407\x1b\u241b\x9c]*(?:[\x07\u2407]|${E}\\|\x9c|<U\+009C>)|${E}[ -/]*[0-Z^-~]|[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029\u2400-\u2421 ]|<U\+[0-9A-F]{4,6}>)*`;

function patternOf(token: string): RegExp {
  const one = (ch: string) => {
    const hex = [...Buffer.from(ch)].map(
      (b) =>
        `%${b
          .toString(16)
          .padStart(2, '0')
          .replace(/[a-f]/g, (h) => `[${h}${h.toUpperCase()}]`)}`,
    );
    return `(?:${ch.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')}|${hex.join('')})`;
  };
  return new RegExp([...token].map(one).join(GAP), 'gu');
}
