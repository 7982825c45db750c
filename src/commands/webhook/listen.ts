import { once } from 'node:events';
import { requireHttpUrl } from '../../cli/args.js';
import { defineCommand } from '../../cli/define.js';
import { flag, list, port, text } from '../../cli/options.js';
import { formatBytes } from '../../cli/stdin.js';
import {
  checkOptions,
  ENCODING_OPTION,
  HEADER_OPTIONS,
  MAX_WEBHOOK_BYTES,
  summaryLine,
  verdictJson,
} from '../../cli/webhook-options.js';
import type { Context } from '../../context.js';
import { CliError, UsageError } from '../../errors.js';
import type { OutputFormat } from '../../output/format.js';
import { safe } from '../../output/text.js';
import { writeJson } from '../../output/write.js';
import { count, num } from '../../util/plural.js';
import { peopleTime } from '../../util/time.js';
import type { Delivery } from '../../webhook/listener.js';
import { loadSecret } from '../../webhook/secret.js';

/** Runs a local receiver until Ctrl-C / SIGTERM; one line per delivery on stdout (NDJSON with --json). */
export default defineCommand({
  path: ['webhook', 'listen'],
  formats: ['table', 'json', 'ndjson'],
  options: {
    port: port('--port <n>', 'port (default 4030; 0 picks a free one)'),
    path: text('--path <path>', 'only this path (default: any)'),
    forwardTo: text('--forward-to <url>', 'pass valid deliveries on to your endpoint, unchanged'),
    tolerance: text('--tolerance <seconds>', 'timestamp tolerance (default 300)'),
    encoding: ENCODING_OPTION,
    allowUnsigned: flag('--allow-unsigned', 'accept unsigned referral.auto_book_completed deliveries'),
    allowHost: list(
      '--allow-host <name>',
      "also accept deliveries addressed to this host name, e.g. a tunnel's (repeatable)",
    ),
    save: text(
      '--save <dir>',
      'keep each delivery as a raw capture (0600) in DIR, made 0700 if missing (up to 1,000 files or 100 MiB); webhook verify --request reads one',
    ),
    ...HEADER_OPTIONS,
  },
  async run(ctx, _args, opts) {
    const { names, encoding, tolerance = 300 } = checkOptions(opts);
    const format = ctx.format('table');
    checkListenOptions(opts);
    // Said once per host name: a tunnel without --allow-host would otherwise fail silently.
    const refused = new Set<string>();
    const saver = opts.save === undefined ? undefined : await import('../../webhook/save.js');
    const saveDir = saver?.openSaveFolder(opts.save as string, (w) => ctx.note(safe`${w}`));
    const secret = await loadSecret(ctx, opts);
    for (const w of secret.warnings) ctx.note(safe`warning: ${w}`);
    const { startListener } = await import('../../webhook/listener.js');
    const { InterruptedError } = await import('../../errors.js');
    const listener = await startListener({
      port: opts.port ?? 4030,
      path: opts.path,
      forwardTo: opts.forwardTo,
      tolerance,
      secret,
      encoding,
      names,
      allowUnsigned: Boolean(opts.allowUnsigned),
      maxBodyBytes: MAX_WEBHOOK_BYTES,
      ...(ctx.globals.timeout !== undefined ? { forwardTimeoutMs: ctx.globals.timeout } : {}),
      allowHosts: opts.allowHost ?? [],
      onRefusedHost: (host) => {
        const name = host.replace(/:\d+$/, '');
        if (refused.has(name) || refused.size >= 10) return;
        refused.add(name);
        ctx.note(
          safe`refused a request addressed to "${host}", not to this listener; if that is your tunnel, add --allow-host ${name || 'NAME'}`,
        );
      },
      now: () => ctx.now().getTime(),
      onDelivery:
        saveDir === undefined
          ? deliveryPrinter(ctx, format)
          : savingPrinter(ctx, format, saveDir, saver!.saveDelivery, saver!.SAVE_LIMITS),
    }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      const hint = 'Pick another with --port, or 0 for any free port.';
      throw new CliError(`port ${opts.port ?? 4030} is already in use on 127.0.0.1`, 1, hint);
    });
    if (saveDir !== undefined)
      ctx.note(
        safe`Saving each delivery in ${saveDir} (imaging webhook verify --request FILE reads one). Deliveries from production carry patient data: keep the folder private and delete the captures when done.`,
      );
    ctx.note(
      `Listening for webhooks on ${listener.url} (tolerance ${tolerance} s${opts.forwardTo ? `, forwarding to ${opts.forwardTo}` : ''}; Ctrl-C stops)`,
    );
    if (!ctx.signal.aborted) await once(ctx.signal, 'abort');
    await listener.close();
    const c = listener.counts;
    ctx.note(
      `\nStopped. ${count(c.received, 'delivery', 'deliveries')}: ${c.valid} valid, ${c.unsigned ? `${c.unsigned} unsigned (accepted with --allow-unsigned), ` : ''}${c.invalid} not valid, ${c.duplicates} duplicate.`,
    );
    const reason = ctx.signal.reason;
    throw new InterruptedError(reason instanceof InterruptedError ? reason.signal : 'SIGINT', true);
  },
});

/** "visit.status_changed  signature does not match (…); …": the problems the headline does not already say. */
function invalidLine(v: { event: string | null; headline: string; problems: readonly string[] }): string {
  const said = v.headline.toLowerCase();
  const more = v.problems.filter((p) => !said.includes(p.toLowerCase().replace(/^the /, '')));
  return `${v.event ?? '?'}  ${[v.headline, ...more].join('; ')}`;
}

function checkListenOptions(opts: {
  path?: string | undefined;
  forwardTo?: string | undefined;
  allowHost?: string[] | undefined;
}): void {
  if (opts.path !== undefined && !opts.path.startsWith('/'))
    throw new UsageError(`--path must start with /, not "${opts.path}"`);
  if (opts.forwardTo !== undefined) requireHttpUrl('--forward-to', opts.forwardTo);
  for (const name of opts.allowHost ?? []) {
    if (!/^(?:[a-z\d](?:[a-z\d-]*[a-z\d])?\.?)+(?::\d{1,5})?$/i.test(name))
      throw new UsageError(
        `--allow-host takes a host name as a client sends it (tunnel.example.com, or NAME:PORT), not "${name}"`,
      );
  }
}

/** --save: each delivery written to its own file first, then its line, naming the file. */
function savingPrinter(
  ctx: Context,
  format: OutputFormat,
  dir: string,
  saveDeliveryNow: (dir: string, d: Delivery, n: number) => string,
  limits: { files: number; bytes: number },
): (d: Delivery) => void {
  const print = deliveryPrinter(ctx, format);
  let n = 0;
  let bytes = 0;
  let full = false;
  return (d) => {
    let saved: string | undefined;
    // Past the limits nothing more is written (said once); deliveries are still checked and printed.
    const size = d.request.body.length;
    if (full || n >= limits.files || bytes + size > limits.bytes) {
      if (!full)
        ctx.note(
          safe`warning: --save stopped saving in ${dir} after ${count(n, 'delivery', 'deliveries')} (at most ${num(limits.files)} files or ${formatBytes(limits.bytes)}), so a flood cannot fill the disk; deliveries are still checked and printed`,
        );
      full = true;
      print(d, undefined);
      return;
    }
    try {
      bytes += size;
      saved = saveDeliveryNow(dir, d, ++n);
    } catch (err) {
      // A full disk or a removed folder loses this capture, not the listener.
      ctx.note(
        safe`warning: delivery not saved in ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
    print(d, saved);
  };
}

/** One line per delivery: a line for people, or an NDJSON record. */
function deliveryPrinter(ctx: Context, format: OutputFormat): (d: Delivery, saved?: string) => void {
  return (d, saved) => {
    if (format === 'table') {
      const time = peopleTime(d.receivedAt, { timeZone: ctx.env.TZ, seconds: true });
      // Accepted without a signature (--allow-unsigned) is not "valid": nothing proved who sent it.
      const state = !d.verdict.valid
        ? 'INVALID'
        : d.verdict.signature === 'unsigned'
          ? 'UNSIGNED'
          : 'valid  ';
      const detail = d.verdict.valid ? summaryLine(d.verdict) : invalidLine(d.verdict);
      const extra = [
        d.duplicate ? '(duplicate delivery)' : '',
        d.forwarded !== undefined ? `-> ${d.forwarded}` : '',
        saved !== undefined ? `saved ${saved}` : '',
      ]
        .filter(Boolean)
        .join('  ');
      // An unsigned request's event name is whatever anyone who reaches the port sent.
      ctx.out.line(safe`${`${time}  ${state}  ${detail}${extra ? `  ${extra}` : ''}`}`);
    } else {
      // One line per delivery with --json too: a stream a script reads as it comes.
      writeJson(
        ctx.sink(),
        {
          received_at: d.receivedAt,
          path: d.path,
          ...verdictJson(d.verdict),
          duplicate: d.duplicate,
          forwarded_status: d.forwarded ?? null,
          response_status: d.status,
          ...(saved !== undefined ? { saved } : {}),
        },
        'ndjson',
      );
    }
  };
}
