import { type IncomingHttpHeaders, STATUS_CODES } from 'node:http';
import { type ApiClient, type ApiResponse, MAX_JSON_DEPTH, nestedDeeperThan } from '../api/client.js';
import { ALL_PER_PAGE, fetchPagesInOrder, MAX_PAGES_WITHOUT_TOTAL, PageWalk } from '../api/pages.js';
import { apiScope, outsideScope, pathTrick, type Query } from '../api/url.js';
import { normaliseUuid, normaliseUuids } from '../cli/args.js';
import { defineCommand } from '../cli/define.js';
import { MAX_INPUT_BYTES, parseJsonInput, readInput } from '../cli/input.js';
import { arg, completes, file, flag, list, pairs, text } from '../cli/options.js';
import { formatBytes } from '../cli/stdin.js';
import type { Context } from '../context.js';
import { ApiError, CliError, ExitCode, UsageError } from '../errors.js';
import type { OutputFormat } from '../output/format.js';
import { clean } from '../output/text.js';
import { write } from '../output/write.js';
import { inexactInteger } from '../util/integer.js';
import { count } from '../util/plural.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

// For the endpoints the spec names without shapes, with the auth, errors and exit codes of every command.
export default defineCommand({
  path: ['api'],
  formats: ['json', 'ndjson'],
  description:
    'Fields or --input without a METHOD make it a POST (said on stderr); in production any method but GET asks first (--yes to skip).',
  args: [
    arg('<method-or-path>', 'HTTP method, or the path for a GET'),
    arg('[path]', 'path, with or without /api/v2'),
  ],
  options: {
    field: pairs(
      '-F, --field <key=value>',
      'typed field: true, false, null and numbers as JSON; @file or @- reads the value from a file or standard input (repeatable)',
    ),
    rawField: pairs('-f, --raw-field <key=value>', 'string field (repeatable)'),
    method: completes(
      text('-X, --method <method>', 'HTTP method, as gh api takes it (or give it before the path)'),
      METHODS,
    ),
    header: list('-H, --header <name:value>', 'add a request header, as "Name: value" (repeatable)'),
    input: file('--input <file>', 'request body from a file, or - for standard input'),
    include: flag('-i, --include', 'print the status line and the response headers before the body'),
    silent: flag('--silent', 'do not print the response body'),
    paginate: flag(
      '--paginate',
      "follow meta to the last page and print one JSON array of all items; a FHIR Bundle's next links into one Bundle",
    ),
  },
  async run(ctx, [first, second], opts) {
    // A UUID in upper case is the same id: every UUID-shaped value goes in lower case, as the API
    // stores and compares them (a field, a list of them in one field, the path and its query).
    const fields: Array<[string, unknown]> = [
      ...(await fileFields(ctx, opts.field ?? [], opts.input)),
      ...(opts.rawField ?? []).map(([k, v]) => [k, normaliseUuids(v)] as [string, unknown]),
    ];
    const headers = requestHeaders(opts.header ?? []);
    const { method, path, why } = methodAndPath(first, second, opts, fields.length > 0);
    if (opts.paginate && method !== 'GET') throw new UsageError('--paginate works with GET only');
    if (opts.paginate && opts.include)
      throw new UsageError('-i/--include works on one answer, not with --paginate');
    const format = ctx.format('json');

    let body: Buffer | undefined;
    let query: Query = {};
    const fieldsInQuery =
      method === 'GET' || method === 'HEAD' || method === 'DELETE' || opts.input !== undefined;
    if (opts.input !== undefined) {
      if (method === 'GET' || method === 'HEAD')
        throw new UsageError(`--input sends a body, which ${method} does not take`);
      body = await readInput(ctx, opts.input, '--input');
      parseJsonInput(body, opts.input === '-' ? 'standard input' : opts.input);
    }
    if (fieldsInQuery) query = toQuery(fields);
    else if (fields.length > 0) body = Buffer.from(JSON.stringify(nest(fields)));
    // The cap is on what is sent: several -F @file fields under it each may add up to more.
    if (body && body.length > MAX_INPUT_BYTES)
      throw new UsageError(
        `the request body would be ${formatBytes(body.length)}, larger than ${formatBytes(MAX_INPUT_BYTES)}`,
        'Nothing was sent. Send fewer or smaller files.',
      );

    const client = ctx.api(); // token and base URL checked before anyone is asked anything
    if (why) ctx.note(why);
    if (!(await confirmed(ctx, client, method, path, opts.input))) {
      ctx.note('Nothing was sent.');
      return ExitCode.failure;
    }
    if (opts.paginate) return paginate(ctx, client, { path, query, headers }, format, opts.silent === true);
    const res = await client
      .request({ method, path, query, body, headers, raw: true })
      .catch((err: unknown) => {
        // -i on an error status: its status line and headers, then the error block (stderr).
        if (opts.include && err instanceof ApiError && err.details.headers)
          printHead(ctx, { status: err.status, headers: err.details.headers });
        throw err;
      });
    if (opts.include) printHead(ctx, res);
    if (opts.silent) return 0;
    return printAnswer(ctx, res, format);
  },
});

/** METHOD and PATH as given, or the method the fields and --input imply (with a note saying why). */
function methodAndPath(
  first: string,
  second: string | undefined,
  opts: { input?: string | undefined; paginate?: boolean | undefined; method?: string | undefined },
  hasFields: boolean,
): { method: string; path: string; why: string | undefined } {
  let method: string;
  let path: string;
  let why: string | undefined;
  const flagMethod = opts.method === undefined ? undefined : knownMethod(opts.method, '-X/--method: ');
  if (second !== undefined) {
    method = knownMethod(first);
    if (flagMethod !== undefined && flagMethod !== method)
      throw new UsageError(
        `two methods given: ${method} before the path and ${flagMethod} with -X/--method`,
        'Give the method once.',
      );
    path = second;
  } else if (flagMethod !== undefined) {
    if (METHODS.includes(first.toUpperCase()))
      throw new UsageError(`"${first}" is an HTTP method: give the path after it`);
    method = flagMethod;
    path = first;
  } else {
    // `imaging api GET`: a method with no path, not a request for /api/v2/GET.
    if (METHODS.includes(first.toUpperCase()))
      throw new UsageError(
        `"${first}" is an HTTP method: give the path after it`,
        `e.g. imaging api ${first.toUpperCase()} /referrals`,
      );
    path = first;
    // As gh api: fields or a body make it a POST, unless paginating (which reads).
    method = !opts.paginate && (hasFields || opts.input !== undefined) ? 'POST' : 'GET';
    if (method === 'POST')
      why =
        opts.input !== undefined
          ? 'Sending POST: --input sends a body (name the method to send another: imaging api PUT …).'
          : `Sending POST: fields make a request a POST, as in gh api; to send them as a query instead: imaging api GET ${path} …`;
  }
  path = lowerUuidsInPath(path);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path) || path.startsWith('//')) {
    throw new UsageError(
      'give a path, not a full URL',
      'The host comes from --env / --base-url, so your token only goes there.',
    );
  }
  // Checked here too, before anything else: the query part may hold anything.
  const trick = pathTrick(path.split('?')[0] ?? '');
  if (trick)
    throw new UsageError(
      `the path "${path}" holds ${trick}, which some servers resolve to another path`,
      'Write the path plainly: ASCII, / separators, no . or .. segments, nothing percent-encoded twice; the token is sent only below the base URL.',
    );
  return { method, path, why };
}

/** The method in upper case; an unknown one is a usage error. */
function knownMethod(given: string, prefix = ''): string {
  const method = given.trim().toUpperCase();
  if (!METHODS.includes(method))
    throw new UsageError(`${prefix}unknown HTTP method "${given}"`, `Use one of: ${METHODS.join(', ')}.`);
  return method;
}

// The client owns these: the token, where it goes and how the body is framed.
const OWN_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'trailers',
  'http2-settings',
]);

/** -H "Name: value" as headers; a header the client owns, or a value that breaks the line, is refused. */
function requestHeaders(given: string[]): Record<string, string> {
  const headers = bare<string>();
  for (const h of given) {
    const colon = h.indexOf(':');
    const name = (colon < 0 ? h : h.slice(0, colon)).trim();
    if (colon < 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new UsageError(`-H "${h}": give a header as "Name: value"`);
    const value = h.slice(colon + 1).trim();
    if (OWN_HEADERS.has(name.toLowerCase()))
      throw new UsageError(
        `-H ${name}: imaging sets this header itself and does not take it from -H`,
        /authorization/i.test(name)
          ? 'The token comes from imaging auth login or IMAGING_TOKEN, and goes only to the API.'
          : undefined,
      );
    if (/[\r\n\0]/.test(value))
      throw new UsageError(`-H ${name}: the value holds a line break or NUL, which a header cannot`);
    // Anything else outside printable ASCII and tab would fail in the HTTP layer as an unexpected error.
    if (/[^\t\x20-\x7e]/.test(value))
      throw new UsageError(
        `-H ${name}: the value holds a control or non-ASCII character, which a header cannot carry`,
        'Give the value in plain ASCII (percent-encode it if the server expects that).',
      );
    const key = name.toLowerCase();
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
  }
  return headers;
}

/** In production, anything but GET is confirmed first (or with --yes); false when the user says no. */
async function confirmed(
  ctx: Context,
  client: ApiClient,
  method: string,
  path: string,
  input: string | undefined,
): Promise<boolean> {
  if (method === 'GET' || ctx.globals.yes || !ctx.targetsProduction()) return true;
  if (!ctx.io.stdinIsTTY || input === '-')
    throw new UsageError(
      `imaging api ${method} in production needs confirmation`,
      input === '-'
        ? 'The body came on standard input, so it cannot also answer a question: add --yes.'
        : 'There is no terminal to ask on: add --yes to confirm.',
    );
  return (await ctx.prompter()).confirm(`Send ${method} ${path} to PRODUCTION (${client.baseUrl})?`);
}

/** What --paginate asks for; the -H headers go with every page. */
interface PagedRequest {
  path: string;
  query: Query;
  headers: Record<string, string>;
}

async function paginate(
  ctx: Context,
  client: ApiClient,
  asked: PagedRequest,
  format: OutputFormat,
  silent: boolean,
): Promise<number> {
  const { path, query, headers } = asked;
  // Page 1 as the meta walk asks for it; a FHIR Bundle answer is walked by its `next` links instead.
  const perPage = perPageOf(query);
  const firstAnswer = await client.request({
    path,
    query: { ...query, page: 1, per_page: perPage },
    headers,
    signal: ctx.signal,
  });
  if (isBundle(firstAnswer.data)) return fhirPages(ctx, client, asked, firstAnswer, format, silent);
  let duplicates = 0;
  async function* pages() {
    const walk = fetchPagesInOrder(
      client,
      {
        path,
        query,
        headers,
        firstAnswer,
        perPage,
        concurrency: 1,
        requireIds: false,
        parsed: true,
        what: path,
        listName: `the list at ${path}`,
        onNote: (text) => ctx.note(text),
      },
      ctx.signal,
    );
    for await (const page of walk) {
      duplicates = page.duplicates;
      yield page.items;
    }
  }
  if (silent) for await (const _ of pages());
  else await write(pages(), { sink: ctx.sink(), format, signal: ctx.signal });
  if (duplicates > 0)
    ctx.note(
      `warning: ${count(duplicates, 'record')} came again on a later page (same id) and ${duplicates === 1 ? 'is' : 'are'} printed once.`,
    );
  return 0;
}

/** As gh api -i: the status line and each header a line (server text cleaned), then a blank line. */
function printHead(ctx: Context, res: { status: number; headers: IncomingHttpHeaders }): void {
  const lines = [`HTTP/1.1 ${res.status} ${clean(STATUS_CODES[res.status] ?? '')}`.trimEnd()];
  for (const name of Object.keys(res.headers).sort()) {
    const value = res.headers[name];
    for (const v of Array.isArray(value) ? value : [value ?? ''])
      lines.push(`${clean(name)}: ${clean(asUtf8(v))}`);
  }
  ctx.out.write(`${lines.join('\n')}\n\n`);
}

// Node reads header bytes as Latin-1: UTF-8 shown as its characters, so what hides between two of
// them (U+200B, a bidi mark) is seen and escaped as such, not as three letters.
function asUtf8(value: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}

function isBundle(data: unknown): data is Record<string, unknown> {
  return (
    typeof data === 'object' &&
    data !== null &&
    !Array.isArray(data) &&
    (data as Record<string, unknown>).resourceType === 'Bundle'
  );
}

/**
 * A FHIR R4 searchset: each Bundle's `link` with relation `next`, followed only below the API's own
 * base URL (the token's scope), its entries merged into one Bundle (JSON) or an entry a line (NDJSON,
 * written page by page as they come).
 */
async function fhirPages(
  ctx: Context,
  client: ApiClient,
  asked: PagedRequest,
  first: ApiResponse,
  format: OutputFormat,
  silent: boolean,
): Promise<number> {
  const walk = new PageWalk(`the Bundle at ${asked.path}`);
  const pages = fhirEntries(ctx, client, asked, first, walk);
  if (silent) for await (const _ of pages);
  else if (format === 'ndjson') await write(pages, { sink: ctx.sink(), format, signal: ctx.signal });
  else {
    // Pushed one by one: a page of 130,000 entries spread into arguments overflows the stack.
    const entries: unknown[] = [];
    for await (const page of pages) for (const e of page) entries.push(e);
    // The first Bundle's own fields; its links were for one page, not the merged whole.
    const { link: _link, entry: _entry, ...head } = first.data as Record<string, unknown>;
    await write({ one: { ...head, entry: entries } }, { sink: ctx.sink(), format });
  }
  if (walk.duplicates > 0)
    ctx.note(
      `warning: ${count(walk.duplicates, 'entry', 'entries')} came again on a later page (same resource) and ${walk.duplicates === 1 ? 'is' : 'are'} printed once.`,
    );
  return 0;
}

/**
 * Each page's new entries. The list reader's rule stops endless paging: a page that repeats an
 * earlier one, or whose resources were all seen already, ends the walk with an error (exit 1).
 */
async function* fhirEntries(
  ctx: Context,
  client: ApiClient,
  { path, headers }: PagedRequest,
  first: ApiResponse,
  walk: PageWalk,
): AsyncGenerator<unknown[]> {
  const scope = apiScope(client.baseUrl);
  const root = new URL(scope).pathname.replace(/\/+$/, '');
  const seen = new Set<string>();
  let bundle = first.data as Record<string, unknown>;
  let url = first.url;
  for (let page = 1; ; page++) {
    const where = `page ${page} of the Bundle at ${path}`;
    if (bundle.entry !== undefined && !Array.isArray(bundle.entry))
      throw new CliError(`${where}: its entry is not a list`);
    const keyed = ((bundle.entry as unknown[] | undefined) ?? []).map((entry) => ({
      id: entryKey(entry),
      entry,
    }));
    yield (walk.accept(page, keyed, {}) ?? []).map((k) => k.entry);
    const next = nextLink(bundle);
    if (next === undefined) return;
    const target = nextTarget(next, url, scope, where);
    if (seen.has(target.href) || target.href === url)
      throw new CliError(`${where}: its next link leads back to a page already read; stopped`);
    if (page >= MAX_PAGES_WITHOUT_TOTAL)
      throw new CliError(
        `the Bundle at ${path} has more than ${count(MAX_PAGES_WITHOUT_TOTAL, 'page')}; stopped`,
      );
    seen.add(target.href);
    const res = await client.request({
      path: `${target.pathname.slice(root.length)}${target.search}`,
      headers,
      signal: ctx.signal,
    });
    if (!isBundle(res.data)) throw new CliError(`page ${page + 1} of the Bundle at ${path} is not a Bundle`);
    bundle = res.data;
    url = res.url;
  }
}

/** An entry's identity: its fullUrl, else its resource's type and id (undefined when it has neither). */
function entryKey(entry: unknown): string | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const e = entry as { fullUrl?: unknown; resource?: { resourceType?: unknown; id?: unknown } | null };
  if (typeof e.fullUrl === 'string' && e.fullUrl !== '') return e.fullUrl;
  const id = e.resource?.id;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  return `${String(e.resource?.resourceType ?? '')}/${id}`;
}

/** The next link as a URL below the token's scope, or an error saying why it is not followed. */
function nextTarget(next: string, url: string, scope: string, where: string): URL {
  let target: URL;
  try {
    target = new URL(next, url);
  } catch {
    throw new CliError(`${where}: its next link "${clean(next)}" is not a URL`);
  }
  target.hash = '';
  // A javascript: or data: URL has no origin ("null"): name its scheme instead.
  const to = /^https?:$/.test(target.protocol)
    ? clean(target.origin + target.pathname)
    : `a ${clean(target.protocol)} URL`;
  if (outsideScope(target, scope))
    throw new CliError(
      `${where}: its next link leads outside ${scope} (to ${to}); not followed, so the token goes nowhere else`,
    );
  return target;
}

function nextLink(bundle: Record<string, unknown>): string | undefined {
  if (!Array.isArray(bundle.link)) return undefined;
  for (const l of bundle.link as unknown[]) {
    const link = l as Record<string, unknown> | null;
    if (link && link.relation === 'next' && typeof link.url === 'string' && link.url !== '') return link.url;
  }
  return undefined;
}

const NOT_JSON = Symbol('not JSON');

/** JSON as records; anything else (or JSON nested too deep to print again) as the bytes that came. */
async function printAnswer(
  ctx: Context,
  res: { raw: Buffer; headers: Record<string, unknown> },
  format: OutputFormat,
): Promise<number> {
  if (res.raw.length === 0) return 0;
  const type = String(res.headers['content-type'] ?? '');
  let parsed: unknown = NOT_JSON;
  if (/json/i.test(type) || /^\s*[[{]/.test(res.raw.subarray(0, 64).toString('utf8'))) {
    try {
      parsed = JSON.parse(res.raw.toString('utf8'));
    } catch {}
  }
  if (parsed === NOT_JSON || nestedDeeperThan(parsed, MAX_JSON_DEPTH)) {
    // On a terminal a person reads it: text through the one sanitiser. Piped: the bytes as they came.
    if (ctx.io.stdoutIsTTY) ctx.out.write(res.raw.toString('utf8'));
    else ctx.io.stdout.write(res.raw);
    return 0;
  }
  // NDJSON: a list's items a line each; anything else is one record.
  await write(format === 'ndjson' && Array.isArray(parsed) ? parsed : { one: parsed }, {
    sink: ctx.sink(),
    format,
  });
  return 0;
}

/** The per_page the fields ask for, else the one --all asks for. */
function perPageOf(query: Query): number {
  const asked = query.per_page;
  return typeof asked === 'string' && asked !== '' && Number.isFinite(Number(asked))
    ? Number(asked)
    : ALL_PER_PAGE;
}

/** `/referrals/ABC…?ids=DEF…,AB…`: each UUID segment, and each query value of UUIDs, in lower case. */
function lowerUuidsInPath(path: string): string {
  const at = path.indexOf('?');
  const segments = (at < 0 ? path : path.slice(0, at)).split('/').map((s) => normaliseUuid(s));
  if (at < 0) return segments.join('/');
  const pairs = path
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const value = pair.slice(eq + 1).replace(/%2C/gi, ',');
      const lower = normaliseUuids(value);
      return lower === value ? pair : `${pair.slice(0, eq + 1)}${lower}`;
    });
  return `${segments.join('/')}?${pairs.join('&')}`;
}

/**
 * -F values as gh reads them: `@file` (or `@-`, standard input) is the file's text as a string, read
 * before any request so a missing file is a usage error; anything else is typed.
 */
async function fileFields(
  ctx: Context,
  pairs: Array<[string, string]>,
  input: string | undefined,
): Promise<Array<[string, unknown]>> {
  const out: Array<[string, unknown]> = [];
  let stdinBy: string | undefined = input === '-' ? '--input -' : undefined;
  let read = 0;
  for (const [k, v] of pairs) {
    if (!v.startsWith('@')) {
      out.push([k, typed(normaliseUuids(v))]);
      continue;
    }
    const source = v.slice(1);
    if (source === '') throw new UsageError(`-F ${k}=@: give a file after @, or @- for standard input`);
    if (source === '-') {
      // Standard input can be read only once.
      if (stdinBy !== undefined)
        throw new UsageError(`-F ${k}=@- and ${stdinBy} both read standard input; it can be read once`);
      stdinBy = `-F ${k}=@-`;
    }
    const bytes = await readInput(ctx, source, `-F ${k}`);
    read += bytes.length;
    if (read > MAX_INPUT_BYTES)
      throw new UsageError(
        `-F ${k}: the files of the -F fields add up to more than ${formatBytes(MAX_INPUT_BYTES)}, the largest request body sent`,
        'Nothing was sent. Send fewer or smaller files.',
      );
    out.push([k, bytes.toString('utf8')]);
  }
  return out;
}

/**
 * -F values: true, false, null and numbers become JSON values; everything else stays a string, as
 * does an integer a JSON number cannot hold exactly (an id of 20 digits keeps its digits, as in gh).
 */
function typed(v: string): unknown {
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (v === 'null') return null;
  if (inexactInteger(v)) return v;
  if (/^-?(0|[1-9]\d*)(\.\d+)?$/.test(v) && Number.isFinite(Number(v))) return Number(v);
  return v;
}

/** Objects built from user keys have no prototype: "__proto__" or "constructor" is a plain key. */
const bare = <T>() => Object.create(null) as Record<string, T>;

function toQuery(fields: Array<[string, unknown]>): Query {
  const q = bare<string | string[]>();
  for (const [k, v] of fields) {
    const text = v === null ? '' : String(v);
    if (k.endsWith('[]')) {
      const prev = q[k];
      q[k] = [...(Array.isArray(prev) ? prev : []), text];
    } else q[k] = text;
  }
  return q;
}

/** Builds a JSON object from Rails-style keys: `a[b][c]=1` nests, `tags[]=x` appends. */
export function nest(fields: Array<[string, unknown]>): Record<string, unknown> {
  const root = bare<unknown>();
  for (const [key, value] of fields) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    if (!m) throw new UsageError(`field name "${key}" is not of the form name, name[key] or name[]`);
    const parts = [m[1]!, ...[...m[2]!.matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1]!)];
    let node: Record<string, unknown> | unknown[] = root;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      if (part === '') {
        if (!Array.isArray(node)) throw new UsageError(`field "${key}": [] must follow a name`);
        if (last) node.push(value);
        else {
          const child = bare<unknown>();
          node.push(child);
          node = child;
        }
        return;
      }
      if (Array.isArray(node) && !/^\d+$/.test(part))
        throw new UsageError(
          `field "${key}": ${parts[i - 1] || 'the list'}[] is a list, it cannot take [${part}]`,
        );
      const container = node as Record<string, unknown>;
      if (last) {
        container[part] = value;
        return;
      }
      const wantArray = parts[i + 1] === '';
      if (!Object.hasOwn(container, part)) container[part] = wantArray ? [] : bare<unknown>();
      const child = container[part];
      if (typeof child !== 'object' || child === null)
        throw new UsageError(`field "${key}": ${part} already holds a value, so it cannot also nest`);
      node = child as Record<string, unknown>;
    });
  }
  return root;
}
