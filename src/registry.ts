import type { AnyCommand } from './cli/define.js';

/** Every command, as metadata only: its words, a one-line summary and how to load its definition. */
interface CommandEntry {
  readonly path: readonly string[];
  readonly summary: string;
  /** Top-level commands: what root help prints after the name ('[options] <code>'), as commander would. */
  readonly usage?: string;
  readonly load: () => Promise<{ default: AnyCommand }>;
}

interface GroupEntry {
  readonly name: string;
  readonly summary: string;
}

export const GROUPS: readonly GroupEntry[] = [
  { name: 'auth', summary: 'log in, check and log out, per environment' },
  { name: 'config', summary: 'read and change stored settings' },
  { name: 'cache', summary: 'the reference-data cache: where it is, clear it' },
  { name: 'law-firms', summary: 'search and request law firms' },
  {
    name: 'referrals',
    summary: 'list, find, show, watch, create, update, auto-book, export and download referrals',
  },
  { name: 'sandbox', summary: "the sandbox's own tools: move a visit, make a fixture, send a test webhook" },
  { name: 'webhook', summary: 'verify captured deliveries, sign test events, listen locally' },
];

/** In the order root help lists them (groups appear where their first command is). */
export const COMMANDS: readonly CommandEntry[] = [
  {
    path: ['auth', 'login'],
    summary: 'store a token for the environment (hidden prompt on a terminal)',
    load: () => import('./commands/auth/login.js'),
  },
  {
    path: ['auth', 'status'],
    summary: 'show each environment: base URL, where the token comes from, its last four characters',
    load: () => import('./commands/auth/status.js'),
  },
  {
    path: ['auth', 'token'],
    summary: 'print the token in use, for scripts (to a pipe; --yes for a terminal)',
    load: () => import('./commands/auth/token.js'),
  },
  {
    path: ['auth', 'allowance'],
    summary: 'the sandbox allowance counted on this machine; --used/--since correct it',
    load: () => import('./commands/auth/allowance.js'),
  },
  {
    path: ['auth', 'logout'],
    summary: 'forget the stored token of the environment',
    load: () => import('./commands/auth/logout.js'),
  },
  {
    path: ['config', 'list'],
    summary: 'show stored settings (tokens masked)',
    load: () => import('./commands/config/list.js'),
  },
  { path: ['config', 'get'], summary: 'print one setting', load: () => import('./commands/config/get.js') },
  {
    path: ['config', 'set'],
    summary: 'change one setting (base-url is per environment: --env)',
    load: () => import('./commands/config/set.js'),
  },
  {
    path: ['config', 'unset'],
    summary: 'remove one setting',
    load: () => import('./commands/config/unset.js'),
  },
  {
    path: ['config', 'path'],
    summary: 'print where the config file is',
    load: () => import('./commands/config/path.js'),
  },
  {
    path: ['cache', 'path'],
    summary: 'print where cached reference data is kept',
    load: () => import('./commands/cache/path.js'),
  },
  {
    path: ['cache', 'clear'],
    summary: 'delete every cached reference answer',
    load: () => import('./commands/cache/clear.js'),
  },
  {
    path: ['modalities'],
    summary: 'list supported modalities',
    usage: '',
    load: () => import('./commands/reference/modalities.js'),
  },
  {
    path: ['body-parts'],
    summary: 'list body parts that can be scanned',
    usage: '[options]',
    load: () => import('./commands/reference/body-parts.js'),
  },
  {
    path: ['cpt'],
    summary: 'every procedure mapping of a CPT code',
    usage: '<code>',
    load: () => import('./commands/reference/cpt.js'),
  },
  {
    path: ['icd10'],
    summary: 'search ICD-10 codes',
    usage: '[options] [query]',
    load: () => import('./commands/reference/icd10.js'),
  },
  {
    path: ['law-firms', 'search'],
    summary: 'search law firms',
    load: () => import('./commands/law-firms/search.js'),
  },
  {
    path: ['law-firms', 'create'],
    summary: 'request a new law firm (created pending)',
    load: () => import('./commands/law-firms/create.js'),
  },
  {
    path: ['referrals', 'list'],
    summary: 'list referrals (one page, or --all)',
    load: () => import('./commands/referrals/list.js'),
  },
  {
    path: ['referrals', 'find'],
    summary: 'find referrals by reference, patient name, date of birth or claim number',
    load: () => import('./commands/referrals/find.js'),
  },
  {
    path: ['referrals', 'get'],
    summary: 'show one referral with its visits',
    load: () => import('./commands/referrals/get.js'),
  },
  {
    path: ['referrals', 'documents'],
    summary: "a referral's report and image links and its documents, one row each",
    load: () => import('./commands/referrals/documents.js'),
  },
  {
    path: ['referrals', 'payments'],
    summary: 'payments logged against a referral (enabled per account)',
    load: () => import('./commands/referrals/payments.js'),
  },
  {
    path: ['referrals', 'notifications'],
    summary: 'email and SMS notifications of a referral, metadata only (enabled per account)',
    load: () => import('./commands/referrals/notifications.js'),
  },
  {
    path: ['referrals', 'create'],
    summary: 'create a referral from a JSON file (sent as is), or guided on a terminal',
    load: () => import('./commands/referrals/create.js'),
  },
  {
    path: ['referrals', 'update'],
    summary: 'change fields of a referral (ICD-10 codes, claim numbers, law firm…) and show what changed',
    load: () => import('./commands/referrals/update.js'),
  },
  {
    path: ['referrals', 'auto-book'],
    summary: 'ask the service to book a referral (closest, soonest); --wait for the outcome',
    load: () => import('./commands/referrals/auto-book.js'),
  },
  {
    path: ['referrals', 'export'],
    summary: 'every referral of every page, as CSV (default), NDJSON, JSON or an Excel workbook',
    load: () => import('./commands/referrals/export.js'),
  },
  {
    path: ['referrals', 'watch'],
    summary: 'wait until referrals reach a visit status (report_uploaded by default)',
    load: () => import('./commands/referrals/watch.js'),
  },
  {
    path: ['referrals', 'download'],
    summary: 'save the report PDFs (or, with --documents, the documents) of referrals into a folder',
    load: () => import('./commands/referrals/download.js'),
  },
  {
    path: ['sandbox', 'advance'],
    summary: 'move a sandbox visit to a status (--to); the service sends visit.status_changed',
    load: () => import('./commands/sandbox/advance.js'),
  },
  {
    path: ['sandbox', 'fixture'],
    summary: 'make a sandbox fixture by name',
    load: () => import('./commands/sandbox/fixture.js'),
  },
  {
    path: ['sandbox', 'test-webhook'],
    summary: "have the sandbox send a test event to your group's webhook URL",
    load: () => import('./commands/sandbox/test-webhook.js'),
  },
  {
    path: ['webhook', 'verify'],
    summary: "check a delivery's signature, timestamp and event shape offline",
    load: () => import('./commands/webhook/verify.js'),
  },
  {
    path: ['webhook', 'sign'],
    summary: 'print the headers of a signed delivery, for testing a receiver',
    load: () => import('./commands/webhook/sign.js'),
  },
  {
    path: ['webhook', 'sample'],
    summary: 'print a bare, spec-shaped event body (for webhook sign)',
    load: () => import('./commands/webhook/sample.js'),
  },
  {
    path: ['webhook', 'send'],
    summary: 'send a realistic signed test event to your receiver; print its status and time',
    load: () => import('./commands/webhook/send.js'),
  },
  {
    path: ['webhook', 'listen'],
    summary: 'a local receiver on 127.0.0.1 that verifies each delivery',
    load: () => import('./commands/webhook/listen.js'),
  },
  {
    path: ['api'],
    summary: 'call any API path (like gh api): auth, base URL, errors and exit codes as everywhere',
    usage: '[options] <method-or-path> [path]',
    load: () => import('./commands/api.js'),
  },
  {
    path: ['sso'],
    summary: 'print a one-time partner portal URL (it is a credential: do not share it)',
    usage: '[options]',
    load: () => import('./commands/sso.js'),
  },
  {
    path: ['completion'],
    summary: 'print a shell completion script (bash, zsh, fish, powershell)',
    usage: '<shell>',
    load: () => import('./commands/completion.js'),
  },
  {
    path: ['mock'],
    summary: 'run the local emulator of the API (for --env local, demos and tests)',
    usage: '[options]',
    load: () => import('./commands/mock.js'),
  },
];
