import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatSeconds, ProgressBar } from '../../src/output/progress.js';

/** A bar 40 s into an export of 1,500 pages, at page 123 (12,300 records). */
function barAt(pages = 123, total: number | null = 1500) {
  vi.useFakeTimers({ now: 1_000_000 });
  const bar = new ProgressBar(new PassThrough(), true, 'Exporting referrals');
  bar.update(pages, pages * 100, total ?? undefined);
  vi.setSystemTime(1_000_000 + 40_000);
  return bar;
}
afterEach(() => {
  vi.useRealTimers();
});

describe('the progress line fits the width, dropping the least useful parts first', () => {
  it('wide: everything', () => {
    expect(barAt().line(200)).toBe(
      'Exporting referrals [##------------------] 123/1,500 pages  12,300 records  308/s  ETA 7m28s',
    );
  });
  it.each<[number, string]>([
    [92, 'Exporting referrals [##------------------] 123/1,500 pages  12,300 records  308/s  ETA 7m28s'],
    [91, 'Exporting referrals [#---------] 123/1,500 pages  12,300 records  308/s  ETA 7m28s'],
    [82, 'Exporting referrals [#---------] 123/1,500 pages  12,300 records  308/s  ETA 7m28s'],
    [81, 'Exporting referrals 123/1,500 pages  12,300 records  308/s  ETA 7m28s'],
    [50, '123/1,500 pages  12,300 records  308/s  ETA 7m28s'],
    [40, '123/1,500 pages  308/s  ETA 7m28s'],
    [20, '308/s  ETA 7m28s'],
    [15, 'ETA 7m28s'],
    [8, '308/s'],
    [4, ''],
  ])('in %i characters', (width, expected) => {
    const line = barAt().line(width);
    expect(line).toBe(expected);
    expect(line.length).toBeLessThanOrEqual(width);
  });
  it('at 80 columns (77 with room for "^C"), rate and ETA are there', () => {
    expect(barAt(9999, 10000).line(77)).toMatch(/ [\d,]+\/s {2}ETA \d+s$/);
  });
  it('with no total known: no bar, no ETA', () => {
    expect(barAt(7, null).line(200)).toBe('Exporting referrals 7 pages  700 records  18/s');
  });
});

describe('drawing', () => {
  it('uses the terminal width the stream reports, redrawn each time', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    Object.assign(out, { columns: 40 });
    const bar = new ProgressBar(out, true, 'Exporting referrals', 200);
    bar.update(1, 100, 10);
    const text = (chunks.at(-1) ?? '').replace(/\u001b\[[?\d]*[a-zA-Z]|\r/g, '');
    expect(text.length).toBeLessThanOrEqual(37);
    expect(text).toMatch(/ETA/);
    bar.done();
    expect(chunks.at(-1)).toBe('\r\u001b[2K\u001b[?25h');
  });
});

describe('a narrow terminal', () => {
  // Seen: at 10 columns the line was drawn 10 wide (at least 10, at columns - 3), reached the last
  // column, and stayed on screen after Ctrl-C. Below 20 columns no line is drawn at all.
  const drawnAt = (columns: number) => {
    vi.useFakeTimers({ now: 1_000_000 });
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    Object.assign(out, { columns });
    const bar = new ProgressBar(out, true, 'Exporting referrals');
    bar.update(1, 100, 10);
    return { out, chunks, bar };
  };
  it.for([1, 10, 12, 13, 19])('%i columns: nothing is written, not even on done()', (columns) => {
    const { chunks, bar } = drawnAt(columns);
    vi.advanceTimersByTime(3000);
    bar.update(2, 200, 10);
    bar.done();
    expect(chunks).toEqual([]);
  });
  it('20 columns: a line of at most 17', () => {
    const { chunks, bar } = drawnAt(20);
    const text = (chunks.at(-1) ?? '').replace(/\u001b\[[?\d]*[a-zA-Z]|\r/g, '');
    expect(text).toMatch(/^(?:[\d,]+\/s {2})?ETA \d/);
    expect(text.length).toBeLessThanOrEqual(17);
    bar.done();
  });
  it('a window narrowed below 20 after a line was drawn: the line is cleared, none drawn again', () => {
    const { out, chunks, bar } = drawnAt(80);
    expect(chunks.join('')).toContain('1/10 pages');
    Object.assign(out, { columns: 12 });
    vi.advanceTimersByTime(200);
    bar.update(2, 200, 10);
    expect(chunks.at(-1)).toBe('\r\u001b[2K');
    bar.done();
    expect(chunks.join('')).not.toContain('2/10 pages');
  });
});

describe('a stall', () => {
  // Seen: a stalled export showed "1/15 pages … ETA 1s" for 10 s while 5 pages had arrived, as the
  // redraws inside the redraw interval were dropped and never drawn.
  it('the last state is drawn once the redraw interval is up, and redrawn while nothing comes', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    const bar = new ProgressBar(out, true, 'Exporting referrals', 200);
    bar.update(1, 20, 15);
    for (let p = 2; p <= 5; p++) bar.update(p, p * 20, 15); // within the same interval: dropped
    expect(chunks.join('')).not.toContain('5/15 pages');
    vi.advanceTimersByTime(100);
    expect(chunks.at(-1)).toContain('5/15 pages  100 records');
    const drawn = chunks.length;
    vi.advanceTimersByTime(3000); // a stall: the rate falls as time passes
    expect(chunks.length).toBeGreaterThanOrEqual(drawn + 2);
    expect(chunks.at(-1)).toContain('5/15 pages  100 records  33/s'); // 100 in 3.1 s
    bar.done();
    const after = chunks.length;
    vi.advanceTimersByTime(5000);
    expect(chunks.length).toBe(after); // nothing drawn once done
  });
});

describe('formatSeconds', () => {
  it.each<[number, string]>([
    [3.2, '4s'],
    [59.9, '60s'],
    [119.6, '2m00s'],
    [448, '7m28s'],
    [Number.POSITIVE_INFINITY, '?'],
  ])('%d s reads %s', (s, expected) => {
    expect(formatSeconds(s)).toBe(expected);
  });
});
