import type { Writable } from 'node:stream';
import { HumanStream, safe } from './text.js';

/**
 * A one-line progress bar on stderr (only when stderr is a terminal): pages, records, rate, ETA.
 * Redrawn at most every 100 ms; `done()` clears the line and shows the cursor again, so the
 * terminal is left as it was, also on failure or Ctrl-C.
 */
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

  /** `stream` is stderr: a raw one is wrapped, so the bar too writes through the one sanitiser. */
  constructor(
    stream: Writable | HumanStream,
    private readonly enabled: boolean,
    private readonly label: string,
    private readonly width: number = 80,
  ) {
    this.stream = stream instanceof HumanStream ? stream : new HumanStream(stream);
  }

  update(pages: number, records: number, totalPages: number | undefined): void {
    this.pages = pages;
    this.records = records;
    this.totalPages = totalPages;
    if (!this.enabled || this.finished) return;
    const now = Date.now();
    if (now - this.lastDraw < 100 && pages !== totalPages) return;
    this.lastDraw = now;
    this.draw();
  }

  line(): string {
    const secs = (Date.now() - this.started) / 1000;
    const rate = secs > 0 ? Math.round(this.records / secs) : 0;
    const total = this.totalPages;
    let bar = '';
    let eta = '';
    if (total && total > 0) {
      const frac = Math.min(1, this.pages / total);
      const cells = 20;
      const full = Math.round(frac * cells);
      bar = `[${'#'.repeat(full)}${'-'.repeat(cells - full)}] `;
      if (this.pages > 0 && frac < 1)
        eta = `  ETA ${formatSeconds((secs / this.pages) * (total - this.pages))}`;
    }
    const pages = total ? `${this.pages}/${total} pages` : `${this.pages} pages`;
    return `${this.label} ${bar}${pages}  ${this.records.toLocaleString('en-US')} records  ${rate.toLocaleString('en-US')}/s${eta}`;
  }

  private draw(): void {
    const text = this.line().slice(0, Math.max(10, this.width - 1));
    // \x1b[?25l hides the cursor while drawing; \x1b[2K clears the line. The escapes are literal
    // parts of safe`…` (our own); the text is cleaned.
    this.stream.write(this.drawn ? safe`\r\u001b[2K${text}` : safe`\u001b[?25l\r\u001b[2K${text}`);
    this.drawn = true;
  }

  /** Clears the bar and restores the cursor. Safe to call more than once. */
  done(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.enabled && this.drawn) this.stream.write(safe`\r\u001b[2K\u001b[?25h`);
  }
}

export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${Math.ceil(s)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
}
