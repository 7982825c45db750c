import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { Context, type ContextDeps, type GlobalOptions, type IO, processIO } from './context.js';
import { exitCodeOf, formatError, InterruptedError, STOP_SIGNALS, type StopSignal } from './errors.js';
import { FORMATS } from './output/format.js';
import { HumanStream, joinSafe, type SafeText, safe, style } from './output/text.js';
import { keyValue, portNumber, positiveInt } from './util/args.js';
import { runForcedExitTasks } from './util/cleanup.js';
import { VERSION } from './version.js';

/**
 * The command tree holds metadata only: each action imports its handler when that command runs,
 * so start-up pays for one command, not all of them (the Vercel CLI pattern).
 */

type Handler = (ctx: Context, ...args: unknown[]) => Promise<number | undefined> | number | undefined;
type Loader = () => Promise<Handler>;

export interface MainDeps extends Partial<Omit<ContextDeps, 'globals'>> {
  io?: IO;
  env?: NodeJS.ProcessEnv;
}

const PAGE = ['--page <n>', 'page number to fetch'] as const;
const PER_PAGE = ['--per-page <n>', 'records per page'] as const;

export async function main(argv: string[], deps: MainDeps = {}): Promise<number> {
  let received: StopSignal | undefined;
  const io = deps.io ?? processIO(() => (received ? STOP_SIGNALS[received] : undefined));
  const env = deps.env ?? process.env;
  let exitCode = 0;
  let ctx: Context | undefined;
  const controller = new AbortController();
  const signal = deps.signal ?? controller.signal;
  let finished = false;
  const onSignal = (sig: StopSignal) => {
    if (received || finished) {
      // A second signal, or one after the command is done: stop now, but still leave no partial
      // file behind (the exit code is 128 + this signal's number).
      runForcedExitTasks();
      process.exit(STOP_SIGNALS[sig]);
    }
    received = sig;
    controller.abort(new InterruptedError(sig));
  };
  // SIGHUP (the terminal closed) and SIGQUIT are handled like SIGINT and SIGTERM: requests stop,
  // temporary files go, exit 128 + the signal's number.
  const handlers = (Object.keys(STOP_SIGNALS) as StopSignal[]).map(
    (sig) => [sig, () => onSignal(sig)] as const,
  );
  const ownSignals = !deps.signal && !deps.io;
  if (ownSignals) for (const [sig, handler] of handlers) process.on(sig, handler);

  const program = buildProgram(
    io,
    (loader, cmd, args) => async () => {
      const globals = cmd.optsWithGlobals() as GlobalOptions & Record<string, unknown>;
      ctx = new Context({ ...deps, io, env, globals, signal });
      const handler = await loader();
      exitCode = (await handler(ctx, ...args, globals)) ?? 0;
    },
    argv,
  );

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version exit 0; every parse error is a usage error (exit 2).
      exitCode = err.exitCode === 0 ? 0 : 2;
    } else {
      const interrupted = received !== undefined || err instanceof InterruptedError;
      if (interrupted) {
        if (received) exitCode = STOP_SIGNALS[received];
        else exitCode = (err as InterruptedError).exitCode;
        if (!(err instanceof InterruptedError && err.quiet))
          new HumanStream(io.stderr).write('\ninterrupted\n');
      } else {
        exitCode = exitCodeOf(err);
        const verbose = Boolean(ctx?.globals.verbose);
        new HumanStream(io.stderr).write(colourError(formatError(err, { verbose }), ctx));
      }
    }
  } finally {
    ctx?.close();
    // The handlers stay: a signal while the process winds down (sockets closing) must not kill it
    // with the default action (no exit code, no cleanup); it exits at once with 128 + its number.
    finished = true;
  }
  if (received && exitCode === 0) exitCode = STOP_SIGNALS[received];
  // Stopped by a signal: leave now rather than through Node's teardown, during which a second
  // Ctrl-C meets no handler and kills the process with no exit code.
  if (received && ownSignals) process.exit(exitCode);
  return exitCode;
}

/** The tool's own colour on the error block; the block itself is already cleaned by formatError. */
function colourError(text: string, ctx: Context | undefined): SafeText {
  const on = Boolean(ctx && ctx.colorLevel('stderr') > 0);
  let hinted = false;
  const lines = text.split('\n').map((line) => {
    if (line.startsWith('error:')) return safe`${style('redBold', 'error:', on)}${line.slice(6)}`;
    if (!hinted && line.startsWith('hint:')) {
      hinted = true;
      return safe`${style('yellow', 'hint:', on)}${line.slice(5)}`;
    }
    return line;
  });
  return safe`${joinSafe(lines, '\n')}\n`;
}

type ActionFactory = (loader: Loader, cmd: Command, args: unknown[]) => () => Promise<void>;

function buildProgram(io: IO, action: ActionFactory, argv: readonly string[]): Command {
  // Parse errors quote the user's arguments: through the sanitiser like any stderr text.
  const humanErr = new HumanStream(io.stderr);
  const program = new Command('imaging');
  // A group's subcommands are built only when that group is invoked: defining every option of
  // every command is a measurable part of start-up, and a lookup needs none of them.
  const target = commandTarget(argv);
  const wants = (group: string) => target === group;
  program
    .description(
      'Partner Imaging Referral API v2 from the terminal: reference lookups, referrals, exports, webhooks.',
    )
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .option('--env <name>', 'environment: sandbox, production or local')
    .option('--base-url <url>', 'API base URL (the part before /api/v2)')
    .addOption(new Option('--format <format>', `output format: ${FORMATS.join(', ')}`))
    .option('--json', 'same as --format json')
    .option(
      '--timeout <ms>',
      'per-request timeout in milliseconds (default 30000)',
      positiveInt('--timeout', 3_600_000),
    )
    .option('--verbose', 'HTTP trace on stderr (never the token or bodies)')
    .option('--no-color', 'no colour in output')
    .option('-y, --yes', 'answer yes to confirmations')
    .showSuggestionAfterError(true)
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ showGlobalOptions: true })
    .addHelpText(
      'after',
      `
Examples:
  imaging mock &                                   # the local emulator, then:
  imaging --env local cpt 73721
  imaging icd10 "meniscus tear" --json
  imaging referrals export --rows visit -o visits.csv
  imaging webhook verify --request delivery.http --secret-file secret.txt

Exit codes: 0 ok, 1 failure, 2 usage, 3 auth, 4 not found, 5 forbidden, 6 limit, 7 rejected,
8 webhook not valid, 130 interrupted. Docs: README.md`,
    )
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => humanErr.write(s),
    })
    .exitOverride();

  const bind = (cmd: Command, loader: Loader) => {
    cmd.exitOverride();
    cmd.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => humanErr.write(s) });
    cmd.action(async (...raw: unknown[]) => {
      const self = raw[raw.length - 1] as Command;
      const positional = raw.slice(0, -2);
      await action(loader, self, positional)();
    });
    return cmd;
  };
  const lazy =
    <M>(load: () => Promise<M>, pick: (m: M) => Handler): Loader =>
    async () =>
      pick(await load());

  // auth
  const auth = program.command('auth').description('log in, check and log out, per environment');
  if (wants('auth')) {
    bind(
      auth
        .command('login')
        .description('store a token for the environment (hidden prompt on a terminal)')
        .option('--with-token', 'read the token from standard input')
        .option('--no-verify', 'store the token without checking it against the API'),
      lazy(
        () => import('./commands/auth.js'),
        (m) => m.login as Handler,
      ),
    );
    bind(
      auth
        .command('status')
        .description('show each environment: base URL, where the token comes from, its last four characters')
        .option('--check', 'make one request per environment to check the token'),
      lazy(
        () => import('./commands/auth.js'),
        (m) => m.status as Handler,
      ),
    );
    bind(
      auth.command('logout').description('forget the stored token of the environment'),
      lazy(
        () => import('./commands/auth.js'),
        (m) => m.logout as Handler,
      ),
    );
  }

  // config
  const config = program.command('config').description('read and change stored settings');
  if (wants('config')) {
    bind(
      config.command('list').description('show stored settings (tokens masked)'),
      lazy(
        () => import('./commands/config.js'),
        (m) => m.list as Handler,
      ),
    );
    bind(
      config.command('get').argument('<key>', 'env or base-url').description('print one setting'),
      lazy(
        () => import('./commands/config.js'),
        (m) => m.get as Handler,
      ),
    );
    bind(
      config
        .command('set')
        .argument('<key>', 'env or base-url')
        .argument('<value>', 'the value')
        .description('change one setting (base-url is per environment: --env)'),
      lazy(
        () => import('./commands/config.js'),
        (m) => m.set as Handler,
      ),
    );
    bind(
      config.command('unset').argument('<key>', 'env or base-url').description('remove one setting'),
      lazy(
        () => import('./commands/config.js'),
        (m) => m.unset as Handler,
      ),
    );
    bind(
      config.command('path').description('print where the config file is'),
      lazy(
        () => import('./commands/config.js'),
        (m) => m.path as Handler,
      ),
    );
  }

  // reference data
  bind(
    program.command('modalities').description('list supported modalities'),
    lazy(
      () => import('./commands/reference.js'),
      (m) => m.modalities as Handler,
    ),
  );
  bind(
    program
      .command('body-parts')
      .description('list body parts that can be scanned')
      .option('--modality <name-or-id>', 'only body parts for this modality'),
    lazy(
      () => import('./commands/reference.js'),
      (m) => m.bodyParts as Handler,
    ),
  );
  bind(
    program
      .command('cpt')
      .argument('<code>', 'an exact CPT code, e.g. 73721')
      .description('every procedure mapping of a CPT code'),
    lazy(
      () => import('./commands/reference.js'),
      (m) => m.cpt as Handler,
    ),
  );
  bind(
    program
      .command('icd10')
      .argument('[query]', 'matched against code or short description')
      .description('search ICD-10 codes')
      .option('--ids <uuids>', 'comma-separated ICD-10 ids to include and prioritise')
      .option(PAGE[0], PAGE[1], positiveInt('--page'))
      .option(PER_PAGE[0], PER_PAGE[1], positiveInt('--per-page', 1000))
      .option('--all', 'fetch every page'),
    lazy(
      () => import('./commands/reference.js'),
      (m) => m.icd10 as Handler,
    ),
  );

  const lawFirms = program.command('law-firms').description('search and request law firms');
  if (wants('law-firms')) {
    bind(
      lawFirms
        .command('search')
        .argument('<query>', 'matched against name and contact fields')
        .description('search law firms')
        .option(PAGE[0], PAGE[1], positiveInt('--page'))
        .option(PER_PAGE[0], PER_PAGE[1], positiveInt('--per-page', 1000))
        .option('--all', 'fetch every page'),
      lazy(
        () => import('./commands/law-firms.js'),
        (m) => m.search as Handler,
      ),
    );
    bind(
      lawFirms
        .command('create')
        .description('request a new law firm (created pending)')
        .requiredOption('--name <name>', 'firm name')
        .requiredOption('--city <city>', 'city')
        .requiredOption('--state <st>', 'two-letter state abbreviation')
        .option('--address-line-1 <text>', 'street address')
        .option('--address-line-2 <text>', 'suite, floor')
        .option('--zipcode <zip>', 'ZIP code'),
      lazy(
        () => import('./commands/law-firms.js'),
        (m) => m.create as Handler,
      ),
    );
  }

  const referrals = program.command('referrals').description('list, show, create and export referrals');
  if (wants('referrals')) {
    const loadReferrals = () => import('./commands/referrals.js');
    bind(
      referrals
        .command('list')
        .description('list referrals (one page, or --all)')
        .option(PAGE[0], PAGE[1], positiveInt('--page'))
        .option(PER_PAGE[0], PER_PAGE[1], positiveInt('--per-page', 1000))
        .option('--all', 'fetch every page')
        .option('--param <key=value>', 'extra query parameter, passed through as is (repeatable)', keyValue),
      lazy(loadReferrals, (m) => m.list as Handler),
    );
    bind(
      referrals
        .command('get')
        .argument('<id>', 'referral id (UUID)')
        .description('show one referral with its visits'),
      lazy(loadReferrals, (m) => m.get as Handler),
    );
    bind(
      referrals
        .command('create')
        .description('create a referral from a JSON file (sent as is)')
        .requiredOption('--file <file>', 'JSON file, or - for standard input'),
      lazy(loadReferrals, (m) => m.create as Handler),
    );
    bind(
      referrals
        .command('export')
        .description('every referral of every page, as CSV (default), NDJSON or JSON')
        .option('--rows <kind>', 'one row per referral (default), visit or procedure')
        .option(
          '-o, --output <file>',
          'write to this file (0600, renamed into place when complete); default stdout',
        )
        .option('--param <key=value>', 'extra query parameter, passed through as is (repeatable)', keyValue)
        .option('--concurrency <n>', 'pages fetched at once (default 4)', positiveInt('--concurrency', 16))
        .option(PER_PAGE[0], 'referrals per page (default 100)', positiveInt('--per-page', 1000))
        .option('--visit-status <statuses>', 'only visits with these statuses (comma-separated)')
        .option('--no-formula-guard', "CSV: do not prefix cells starting with = + - @ with '"),
      lazy(loadReferrals, (m) => m.exportCommand as Handler),
    );
  }

  const webhook = program
    .command('webhook')
    .description('verify captured deliveries, sign test events, listen locally');
  if (wants('webhook')) {
    const loadWebhook = () => import('./commands/webhook.js');
    const headerFlags = (cmd: Command) =>
      cmd
        .option(
          '--secret-file <file>',
          'signing secret from a file (else IMAGING_WEBHOOK_SECRET, else a prompt)',
        )
        .option(
          '--secret-format <format>',
          'raw (the UTF-8 bytes, default) or base64 (whsec_ prefix allowed)',
        )
        .option('--event-header <name>', 'event header name (default X-Service-Event)')
        .option('--timestamp-header <name>', 'timestamp header name (default X-Service-Timestamp)')
        .option('--signature-header <name>', 'signature header name (default X-Service-Signature)');
    bind(
      headerFlags(
        webhook
          .command('verify')
          .description("check a delivery's signature, timestamp and event shape offline")
          .option('--request <file>', 'a raw HTTP request as captured, or - for standard input')
          .option('--body <file>', 'the body alone (with --header), or - for standard input')
          .option(
            '--header <header>',
            '"Name: value" (repeatable, with --body)',
            (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
          )
          .option('--encoding <encoding>', 'digest text: auto (default), hex or base64')
          .option('--tolerance <seconds>', 'fail a timestamp further than this from now (past or future)')
          .option(
            '--allow-unsigned',
            'accept an unsigned referral.auto_book_completed (sent to a per-request URL)',
          ),
      ),
      lazy(loadWebhook, (m) => m.verify as Handler),
    );
    bind(
      headerFlags(
        webhook
          .command('sign')
          .description('print the headers of a signed delivery, for testing a receiver')
          .requiredOption('--body <file>', 'the JSON body, or - for standard input')
          .option('--timestamp <unix-seconds>', 'default: now')
          .option('--event <name>', "default: the body's event_name")
          .option('--encoding <encoding>', 'hex (default) or base64')
          .option('--curl <url>', 'print a curl command that posts the exact body with these headers'),
      ),
      lazy(loadWebhook, (m) => m.sign as Handler),
    );
    bind(
      headerFlags(
        webhook
          .command('listen')
          .description('a local receiver on 127.0.0.1 that verifies each delivery')
          .option('--port <n>', 'port (default 4030; 0 picks a free one)', portNumber)
          .option('--path <path>', 'only this path (default: any)')
          .option('--forward-to <url>', 'pass valid deliveries on to your endpoint, unchanged')
          .option('--tolerance <seconds>', 'timestamp tolerance (default 300)')
          .option('--encoding <encoding>', 'digest text: auto (default), hex or base64')
          .option('--allow-unsigned', 'accept unsigned referral.auto_book_completed deliveries'),
      ),
      lazy(loadWebhook, (m) => m.listen as Handler),
    );
  }

  bind(
    program
      .command('api')
      .description('call any API path (like gh api): auth, base URL, errors and exit codes as everywhere')
      .argument('<method-or-path>', 'HTTP method, or the path for a GET')
      .argument('[path]', 'path, with or without /api/v2')
      .option(
        '-F, --field <key=value>',
        'typed field: true, false, null and numbers as JSON (repeatable)',
        keyValue,
      )
      .option('-f, --raw-field <key=value>', 'string field (repeatable)', keyValue)
      .option('--input <file>', 'request body from a file, or - for standard input')
      .option('--paginate', 'follow meta to the last page and print one JSON array of all items'),
    lazy(
      () => import('./commands/api.js'),
      (m) => m.api as Handler,
    ),
  );

  bind(
    program
      .command('sso')
      .description('print a one-time partner portal URL (it is a credential: do not share it)')
      .option('--open', 'open it in the system browser'),
    lazy(
      () => import('./commands/sso.js'),
      (m) => m.sso as Handler,
    ),
  );

  bind(
    program
      .command('mock')
      .description('run the local emulator of the API (for --env local, demos and tests)')
      .option('--port <n>', 'port on 127.0.0.1 (0 picks a free one)', portNumber, 4010)
      .option(
        '--referrals <n>',
        'how many synthetic referrals to serve',
        positiveInt('--referrals', 1_000_000),
        300,
      )
      .option(
        '--allowance <n>',
        'successful requests per token before 429 sandbox_request_limit_reached',
        positiveInt('--allowance'),
      )
      .option('--latency <ms>', 'delay added to every answer', (v) => positiveIntOrZero('--latency', v))
      .option('--seed <n>', 'seed of the synthetic data set', (v) => positiveIntOrZero('--seed', v), 1)
      .addOption(
        new Option(
          '--list-shape <shape>',
          'GET /referrals answers { referrals, meta } (object) or a bare array',
        ).choices(['object', 'bare']),
      )
      .option('--webhook-url <url>', 'send signed webhooks here (the group webhook_url)')
      .option('--webhook-secret-file <file>', 'signing secret (else IMAGING_WEBHOOK_SECRET)')
      .option('--webhook-secret-format <format>', 'raw (default) or base64')
      .option('--webhook-encoding <encoding>', 'signature digest text: hex (default) or base64')
      .option(
        '--fault <mode[:count][@after]>',
        'inject a fault: 500, 502, reset, slow, truncated, 429 or 401 (repeatable; see README)',
        (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
      )
      .option(
        '--fault-delay-ms <ms>',
        'how long a slow fault holds its answer (default 15000)',
        positiveInt('--fault-delay-ms'),
      )
      .option(
        '--webhook-retry-ms <ms>',
        'first retry delay of a failed delivery (default 1000, doubling)',
        positiveInt('--webhook-retry-ms'),
      )
      .option(
        '--hostile',
        'serve terminal escapes, bidi and format characters in every string, header and reason phrase',
      ),
    lazy(
      () => import('./commands/mock.js'),
      (m) => m.mock as Handler,
    ),
  );

  return program;
}

function positiveIntOrZero(name: string, value: string): number {
  if (!/^\d+$/.test(value.trim()))
    throw new InvalidArgumentError(`${name} must be a whole number, not "${value}".`);
  return Number(value.trim());
}

/** Global options that take a value: their value is not the command's name. */
const VALUED_GLOBALS = new Set(['--env', '--base-url', '--format', '--timeout']);

/** The command (or group) the arguments name: the first word that is not an option or an option's value. */
export function commandTarget(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return undefined;
    if (a.startsWith('-')) {
      if (VALUED_GLOBALS.has(a)) i++;
      continue;
    }
    return a === 'help' ? argv[i + 1] : a;
  }
  return undefined;
}
