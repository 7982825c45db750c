import type { Writable } from 'node:stream';
import type { Context } from '../context.js';
import { formatSeconds } from '../output/progress.js';
import { displayWidth, renderTable } from '../output/table.js';
import { HumanStream, joinSafe, paint, type SafeText, safe, style } from '../output/text.js';
import { cutToWidth } from '../output/wrap.js';
import { writeJson } from '../output/write.js';
import { peopleTime } from '../util/time.js';
import { type Change, isFinished, type Watched, type WatchHooks } from './watch.js';

// What `referrals watch` shows: a line per change (piped), an event per change (NDJSON), the table of every
// watched referral (the live view on a terminal, and the last state). Server text passes the one sanitiser.

const ref = (w: Watched) => w.reference ?? w.id;

/**
 * One line per change: time, reference, visit, modality, previous → new. Within `width` (the live
 * view), "visit N" becomes "vN" first; still too long, the statuses go on a line of their own (and
 * each on its own, if need be): nothing is left out. The statuses are codes and are not cut unless
 * even a line of their own is narrower than one (a status the API does not define).
 */
export function changeLine(c: Change, timeZone: string | undefined, width?: number): SafeText {
  const when = peopleTime(c.at.toISOString(), { timeZone, seconds: true });
  const modality = c.visit.modality ? ` ${c.visit.modality}` : '';
  const [from, to] = [c.previous ?? '(new)', c.visit.status];
  const full = safe`${when}  ${ref(c.watched)}  visit ${c.visit.n}${modality}  ${from} \u2192 ${to}`;
  if (width === undefined || displayWidth(full.text) <= width) return full;
  const short = safe`${when}  ${ref(c.watched)}  v${c.visit.n}${modality}  ${from} \u2192 ${to}`;
  if (displayWidth(short.text) <= width) return short;
  const whole = safe`${when}  ${ref(c.watched)}  visit ${c.visit.n}${modality}`;
  const change = safe`  ${from} \u2192 ${to}`;
  if (displayWidth(whole.text) <= width && displayWidth(change.text) <= width)
    return safe`${whole}\n${change}`;
  // A long reference: the visit goes under it, with the statuses when they fit; only the reference is cut.
  const head = cutToWidth(safe`${when}  ${ref(c.watched)}`.text, width);
  const visit = safe`  visit ${c.visit.n}${modality}`;
  const under = safe`${visit}  ${from} \u2192 ${to}`;
  if (displayWidth(under.text) <= width) return safe`${head}\n${under}`;
  if (displayWidth(change.text) <= width) return safe`${head}\n${cutToWidth(visit.text, width)}\n${change}`;
  // A status wider than the view is none the API defines: cut too, as a wrapped line would break the frame.
  const within = (text: SafeText, room: number) =>
    displayWidth(text.text) <= room ? text : safe`${cutToWidth(text.text, room)}`;
  const [a, b] = [safe`${within(safe`  ${from}`, width - 2)} \u2192`, within(safe`  ${to}`, width)];
  return safe`${head}\n${cutToWidth(visit.text, width)}\n${a}\n${b}`;
}

/** One event per change, shaped like the webhook's visit.status_changed (with the referral's reference and id). */
export function changeEvent(c: Change): Record<string, unknown> {
  return {
    event_name: 'visit.status_changed',
    reference: c.watched.reference ?? null,
    referral_id: c.watched.id,
    visit_id: c.visit.id,
    modality: c.visit.modality,
    status: c.visit.status,
    changes: { status: [c.previous, c.visit.status] },
    occurred_at: c.at.toISOString(),
  };
}

const STANDING_TEXT = { done: 'done', waiting: 'waiting', cannot: 'cannot happen' } as const;

function stateOf(w: Watched): string {
  if (w.problem && !isFinished(w)) return 'retrying';
  return w.standing ? STANDING_TEXT[w.standing] : 'reading';
}

const visitsOf = (w: Watched) =>
  w.visits.length === 0
    ? 'no visits yet'
    : w.visits.map((v) => `${v.modality ?? `visit ${v.n}`} ${v.status || '?'}`).join(', ');

// Not done first (the ones still awaited), then by reference: a long watch keeps its open rows on screen.
const ORDER = (w: Watched) => (w.standing === 'done' ? 2 : w.standing === 'cannot' ? 1 : 0);

/** The table of the watched referrals: at most `maxRows` rows (then a line saying how many more). */
export function stateTable(
  all: readonly Watched[],
  opts: {
    width: number | undefined;
    color: boolean;
    timeZone: string | undefined;
    maxRows?: number;
    /** Left out on stderr, which may be kept in a log: a patient's name goes to stdout only. */
    patient?: boolean;
  },
): SafeText {
  const rows = [...all].sort((a, b) => ORDER(a) - ORDER(b));
  const shown = opts.maxRows !== undefined && rows.length > opts.maxRows ? rows.slice(0, opts.maxRows) : rows;
  const patient = opts.patient !== false;
  const table = renderTable(
    [
      { header: 'Reference', priority: 1, fit: 'keep' },
      { header: 'State', priority: 2, fit: 'keep' },
      { header: 'Visits', priority: 3 },
      { header: 'Changed', priority: 4, fit: 'keep' },
      ...(patient ? [{ header: 'Patient', priority: 6 }] : []),
      { header: 'ID', priority: 7, fit: 'keep' },
    ],
    shown.map((w) => [
      ref(w),
      stateOf(w),
      visitsOf(w),
      w.changedAt ? peopleTime(w.changedAt.toISOString(), { timeZone: opts.timeZone }) : '-',
      ...(patient ? [w.patient] : []),
      w.id,
    ]),
    { color: opts.color, width: opts.width },
  );
  if (shown.length === rows.length) return table;
  return joinSafe([table, safe`\u2026 and ${rows.length - shown.length} more (done last)\n`]);
}

/** "2 done, 1 waiting, 1 cannot happen" */
export function tally(all: readonly Watched[]): string {
  const n = { done: 0, waiting: 0, cannot: 0 };
  for (const w of all) n[w.standing ?? 'waiting']++;
  const parts = [`${n.done} done`, `${n.waiting} waiting`];
  if (n.cannot) parts.push(`${n.cannot} cannot happen`);
  return parts.join(', ');
}

/**
 * The live table on a terminal, redrawn in place: each frame moves the cursor back over the last one
 * and clears below it. Lines are cut to the width, so none wraps and the count of lines to go back over
 * stays right.
 */
export class LiveTable {
  private lines = 0;
  private readonly out: HumanStream;
  constructor(
    stream: Writable,
    readonly width: number,
    private readonly height: number,
    private readonly color: boolean,
    private readonly timeZone: string | undefined,
  ) {
    this.out = new HumanStream(stream);
  }

  draw(all: readonly Watched[], head: string, foot: string, recent: readonly SafeText[]): void {
    // The frame fits the screen (a row may take two lines), or the cursor could not get back to its top.
    const lines = (t: SafeText) => t.text.match(/\n/g)?.length ?? 0;
    const linesOf = (list: readonly SafeText[]) => list.reduce((n, r) => n + 1 + lines(r), 0);
    // On a short screen the oldest changes give way first: the table keeps three lines.
    let shownRecent = recent;
    while (shownRecent.length > 0 && this.height - 3 - linesOf(shownRecent) < 3)
      shownRecent = shownRecent.slice(1);
    const changeLines = linesOf(shownRecent);
    const room = Math.max(3, this.height - 3 - changeLines);
    let rows = room;
    let table = this.table(all, rows);
    while (lines(table) > room && rows > 1) table = this.table(all, --rows);
    // One row whose cells wrap taller than the screen (a status the API does not define): cut to fit.
    if (lines(table) > room) table = paint((t) => `${t.split('\n').slice(0, room).join('\n')}\n`, table);
    // Back to the first line of the last frame; each line is cleared to its end as it is rewritten and
    // what is below the new frame after it (never the whole screen, which a terminal may keep in history).
    const back = this.lines > 0 ? safe`\r\u001b[${this.lines}A` : safe``;
    const frame = joinSafe([
      style('bold', this.cut(head), this.color),
      safe`\n`,
      table,
      // Made to fit (changeLine): a status is a code, never cut.
      ...shownRecent.map((r) => safe`${r}\n`),
      style('dim', this.cut(foot), this.color),
      safe`\n`,
    ]);
    const cleared = paint((text) => text.replace(/\n/g, '\u001b[K\n'), frame);
    this.out.write(joinSafe([back, cleared, safe`\u001b[J`]));
    this.lines = 2 + changeLines + lines(table);
  }

  private table(all: readonly Watched[], maxRows: number): SafeText {
    return stateTable(all, { width: this.width, color: this.color, timeZone: this.timeZone, maxRows });
  }

  /** Cut to the width (the text is the tool's or already cleaned), so that no line wraps. */
  private cut(text: string): string {
    return cutToWidth(text, this.width);
  }
}

const nextPollIn = (next: number | undefined, now: number) =>
  next === undefined ? undefined : `next poll in ${formatSeconds(Math.max(0, (next - now) / 1000))}`;

/** What `referrals watch` shows as it goes (the hooks), and the last state when it ends. */
export interface WatchView {
  hooks: WatchHooks;
  end(how: 'over' | 'interrupted'): void;
}

const problems = (failed: readonly Watched[]) =>
  failed.length === 0
    ? undefined
    : `${failed.length === 1 ? '1 referral' : `${failed.length} referrals`} not read: ${failed[0]?.problem ?? 'no answer'}; trying again next interval`;

/** Piped: a line per change (or an NDJSON event), then the last state (on stderr beside events). */
export function streamView(ctx: Context, head: string, ndjson: boolean): WatchView {
  const timeZone = ctx.env.TZ || undefined;
  let all: readonly Watched[] = [];
  ctx.note(`${head}; Ctrl-C stops.`);
  return {
    hooks: {
      start(list) {
        all = list;
      },
      change(c) {
        if (ndjson) writeJson(ctx.sink(), changeEvent(c), 'ndjson');
        else ctx.out.line(changeLine(c, timeZone));
      },
      finished() {},
      polled(failed) {
        const note = problems(failed);
        if (note) ctx.note(`warning: ${note}`);
      },
      waiting() {},
    },
    end() {
      // The last state: after the lines on stdout; beside the events, on stderr (without names).
      const state = stateTable(all, { width: undefined, color: false, timeZone, patient: !ndjson });
      if (ndjson) ctx.err.write(state);
      else ctx.out.write(state);
    },
  };
}

/** On a terminal: the table redrawn in place after each round and each second, the last changes below it. */
export function liveView(ctx: Context, head: string): WatchView {
  const timeZone = ctx.env.TZ || undefined;
  const rows = (ctx.io.stdout as { rows?: unknown }).rows;
  const live = new LiveTable(
    ctx.io.stdout,
    Math.max(20, ctx.io.columns ?? 80),
    typeof rows === 'number' && rows > 5 ? rows : 24,
    ctx.colorLevel() > 0,
    timeZone,
  );
  let all: readonly Watched[] = [];
  const recent: SafeText[] = [];
  // Every change, for the end: the frame keeps only the last few on screen.
  const seen: SafeText[] = [];
  let next: number | undefined;
  let note: string | undefined;
  let ticker: NodeJS.Timeout | undefined;
  const foot = () =>
    [tally(all), note, nextPollIn(next, Date.now()), 'Ctrl-C stops'].filter(Boolean).join(' · ');
  const draw = (text = foot()) => live.draw(all, head, text, recent);
  return {
    hooks: {
      start(list) {
        all = list;
      },
      change(c) {
        const line = changeLine(c, timeZone, live.width);
        recent.push(line);
        if (recent.length > 3) recent.shift();
        seen.push(line);
      },
      finished() {},
      polled(failed) {
        note = problems(failed);
        draw();
      },
      waiting(at) {
        next = at;
        draw();
        clearInterval(ticker);
        ticker = setInterval(() => draw(), 1000);
        ticker.unref();
      },
    },
    end(how) {
      clearInterval(ticker);
      next = undefined;
      draw(`${tally(all)}${how === 'interrupted' ? ' · stopped' : ''}`);
      // Below the last frame, once it is drawn for good: the changes that scrolled off it.
      if (seen.length <= recent.length) return;
      const shown = seen.slice(0, MAX_LISTED);
      ctx.out.write(
        joinSafe([safe`\nEvery change seen (${seen.length}):\n`, ...shown.map((l) => safe`${l}\n`)]),
      );
      if (seen.length > shown.length)
        ctx.out.line(`… and ${seen.length - shown.length} more (--format ndjson keeps every change)`);
    },
  };
}

/** The most changes listed when a live watch ends; piped, every change is a line as it comes. */
const MAX_LISTED = 100;
