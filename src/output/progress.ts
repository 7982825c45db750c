import type { Writable } from 'node:stream';
import { onForcedExit } from '../util/cleanup.js';
import { num } from '../util/plural.js';
import { HumanStream, safe } from './text.js';

/** The narrowest terminal that gets a progress line. */
const MIN_COLUMNS = 20;

/** A one-line progress bar on stderr (only when stderr is a terminal): pages, records, rate, ETA. */
export class ProgressBar {
  private pages = 0;
  /** Records counted so far (also read for the message of a failed run). */
  records = 0;
  private totalPages: number | undefined;
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;
  private finished = false;
  private readonly stream: HumanStream;
  private unregister: (() => void) | undefined;
  /** The latest state, drawn when the redraws stop coming (a stall after a dropped redraw). */
  private pending: NodeJS.Timeout | undefined;
  /** Redraws every second while nothing arrives, so the rate and ETA follow a stall. */
  private ticker: NodeJS.Timeout | undefined;

  /** `stream` is stderr: a raw one is wrapped, so the bar too writes through the one sanitiser. */
  constructor(
    stream: Writable | HumanStream,
    private readonly enabled: boolean,
    private readonly label: string,
    private readonly width: number = 80,
    /** What is counted: pages of records (a walk), or files of bytes (a download). */
    private readonly units = { pages: 'pages', records: 'records' },
  ) {
    this.stream = stream instanceof HumanStream ? stream : new HumanStream(stream);
  }

  update(pages: number, records: number, totalPages: number | undefined): void {
    this.pages = pages;
    this.records = records;
    this.totalPages = totalPages;
    if (!this.enabled || this.finished) return;
    const now = Date.now();
    if (now - this.lastDraw < 100 && pages !== totalPages) {
      // Dropped for now, not lost: drawn when the interval is up unless another redraw comes first.
      this.pending ??= setTimeout(() => this.redraw(), 100 - (now - this.lastDraw)).unref();
      return;
    }
    this.redraw();
  }

  private redraw(): void {
    clearTimeout(this.pending);
    this.pending = undefined;
    if (this.finished) return;
    this.lastDraw = Date.now();
    this.draw();
  }

  // At most `width` characters: the least useful parts go first, so the rate and the ETA stay.
  line(width = Number.POSITIVE_INFINITY): string {
    const secs = (Date.now() - this.started) / 1000;
    const rate = `${num(secs > 0 ? Math.round(this.records / secs) : 0)}/s`;
    const total = this.totalPages;
    const frac = total && total > 0 ? Math.min(1, this.pages / total) : undefined;
    const bar = (cells: number) => {
      if (frac === undefined) return '';
      const full = Math.round(frac * cells);
      return `[${'#'.repeat(full)}${'-'.repeat(cells - full)}]`;
    };
    const eta =
      total && frac !== undefined && this.pages > 0 && frac < 1
        ? `ETA ${formatSeconds((secs / this.pages) * (total - this.pages))}`
        : '';
    const { pages: unit, records: counted } = this.units;
    const pages = total ? `${num(this.pages)}/${num(total)} ${unit}` : `${num(this.pages)} ${unit}`;
    const records = `${num(this.records)} ${counted}`;
    const join = (head: string[], tail: string[]) =>
      [head.filter(Boolean).join(' '), ...tail].filter(Boolean).join('  ');
    const candidates = [
      join([this.label, bar(20), pages], [records, rate, eta]),
      join([this.label, bar(10), pages], [records, rate, eta]),
      join([this.label, pages], [records, rate, eta]),
      join([pages], [records, rate, eta]),
      join([pages], [rate, eta]),
      join([], [rate, eta]),
      eta,
      rate,
    ];
    // Never a part cut in the middle ("308/s  ETA" of "ETA 7m28s"): nothing, when nothing fits.
    return candidates.find((c) => c !== '' && c.length <= width) ?? '';
  }

  private draw(): void {
    const own = (this.stream.target as { columns?: unknown }).columns;
    const columns = typeof own === 'number' && own > 0 ? own : this.width;
    // Three cells stay free for the "^C" a terminal echoes, which would otherwise wrap below the bar.
    const text = columns < MIN_COLUMNS ? '' : this.line(columns - 3);
    if (text === '') {
      if (this.drawn) this.stream.write(safe`\r\u001b[2K`);
      return;
    }
    // \x1b[?25l hides the cursor while drawing; \x1b[2K clears the line.
    this.stream.write(this.drawn ? safe`\r\u001b[2K${text}` : safe`\u001b[?25l\r\u001b[2K${text}`);
    if (!this.drawn) {
      this.unregister = onForcedExit(() => this.done(), false);
      this.ticker = setInterval(() => {
        if (Date.now() - this.lastDraw >= 900) this.redraw();
      }, 1000).unref();
    }
    this.drawn = true;
  }

  /** Wipes the bar for a line of other output; the next update draws it again below that line. */
  clear(): void {
    if (!this.enabled || this.finished || !this.drawn) return;
    this.stream.write(safe`\r\u001b[2K`);
    this.lastDraw = 0;
  }

  /** Clears the bar and restores the cursor. Safe to call more than once. */
  done(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.pending);
    clearInterval(this.ticker);
    this.unregister?.();
    if (this.enabled && this.drawn) this.stream.write(safe`\r\u001b[2K\u001b[?25h`);
  }
}

export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${Math.ceil(s)}s`;
  const whole = Math.round(s);
  return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
}
