import { execFileSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { cells, cutToWidth, displayWidth, wrapMessage, wrapProse } from '../../src/output/wrap.js';
import { changeLine, LiveTable } from '../../src/referrals/watch-view.js';

describe('messages wrapped to the terminal', () => {
  it('breaks between words, continuation lines under the text after the label', () => {
    const text =
      'warning: 300 referrals were read but no row was written (no visit has status nothing_here): the file holds only the header.';
    const out = wrapMessage(text, 80).split('\n');
    expect(out).toEqual([
      'warning: 300 referrals were read but no row was written (no visit has status',
      '         nothing_here): the file holds only the header.',
    ]);
    for (const l of out) expect(cells(l)).toBeLessThanOrEqual(80);
    expect(out.join(' ').replace(/ +/g, ' ')).toBe(text);
  });

  it('keeps the spacing of aligned columns and never splits a long word', () => {
    const url = `https://example.invalid/${'x'.repeat(50)}`;
    const out = wrapMessage(`  docs:       ${url}`, 80).split('\n');
    // Too long beside its label: a line of its own, whole.
    expect(out).toEqual(['  docs:', url]);
    const huge = `https://example.invalid/${'y'.repeat(100)}`;
    expect(wrapMessage(`  docs:       ${huge}`, 80)).toBe(`  docs:       ${huge}`);
  });

  it("counts wide characters as two cells and the tool's colour codes as none", () => {
    expect(cells('法律')).toBe(4);
    expect(cells('\u001b[31;1merror:\u001b[22;39m')).toBe(6);
    const out = wrapMessage(`\u001b[33mhint:\u001b[39m ${'word '.repeat(30).trim()}`, 40).split('\n');
    for (const l of out) expect(cells(l)).toBeLessThanOrEqual(40);
    expect(out[1]!.startsWith('      word')).toBe(true); // under the text after "hint: "
  });

  it('leaves short lines and narrow widths alone; prose keeps its own indentation', () => {
    expect(wrapMessage('error: short', 80)).toBe('error: short');
    expect(wrapMessage('a '.repeat(40), 10)).toBe('a '.repeat(40));
    expect(
      wrapProse(`    ${'abc '.repeat(30).trim()}`, 40)
        .split('\n')[1]!
        .startsWith('    abc'),
    ).toBe(true);
  });
});

describe('a command to copy in a message', () => {
  const argsOf = (lines: string) =>
    execFileSync('sh', ['-c', `imaging() { printf '%s\\n' "$@"; printf 'END\\n'; }\n${lines}`], {
      encoding: 'utf8',
    })
      .trimEnd()
      .split('\n');
  it.for<[string, string]>([
    [
      'To continue: ',
      'imaging --base-url http://127.0.0.1:4572 referrals export --rows visit -o big2.csv --resumable --resume',
    ],
    [
      'hint: Run: ',
      "imaging referrals export --param 'note=it'\\''s here' -o /tmp/some-long-folder/x.csv --resume",
    ],
  ])(
    '%s… is broken with ` \\` between words: pasted, one command with the same words',
    ([label, command]) => {
      for (const width of [40, 60, 80]) {
        const out = wrapMessage(`${label}${command}`, width);
        const lines = out.split('\n');
        expect(lines.length).toBeGreaterThan(1);
        for (const l of lines) expect(cells(l)).toBeLessThanOrEqual(width);
        for (const l of lines.slice(0, -1)) expect(l).toMatch(/ \\$/);
        const pasted = out.slice(label.length);
        expect(argsOf(pasted)).toEqual([...argsOf(command)]);
        expect(argsOf(pasted).filter((w) => w === 'END')).toHaveLength(1);
      }
    },
  );
  it('prose after the command is wrapped below it, not continued into it', () => {
    const out = wrapMessage(
      'Log in for the new base URL: imaging auth login --env production --base-url https://a.example; for a one-off, set IMAGING_TOKEN instead.',
      60,
    );
    const lines = out.split('\n');
    const last = lines.findIndex((l) => !l.endsWith(' \\'));
    expect(lines[last]).toMatch(/https:\/\/a\.example;$/);
    expect(lines.slice(last + 1).join(' ')).toContain('for a one-off, set IMAGING_TOKEN instead.');
  });
  it('a command that fits, or a line that is not a command, wraps as before', () => {
    expect(wrapMessage('To continue: imaging referrals export --resume', 80)).toBe(
      'To continue: imaging referrals export --resume',
    );
    expect(wrapMessage(`note: ${'word '.repeat(30).trim()}`, 40)).not.toContain('\\');
  });
});

describe('a watch change line never wider than the live view', () => {
  type Visit = { id: string; n: number; modality: string; status: string };
  /** The change of `visit` (from booked) of a referral with `reference`, as a line `width` wide. */
  const lineOf = (reference: string, visit: Visit, width: number) => {
    const watched = {
      id: 'i',
      reference,
      patient: undefined,
      visits: [visit],
      standing: undefined,
      changedAt: undefined,
      problem: undefined,
    };
    return changeLine(
      { at: new Date('2026-11-27T10:00:00Z'), watched, visit, previous: 'booked' },
      'UTC',
      width,
    ).text;
  };

  it('a long reference or one of wide letters is cut with an ellipsis, the statuses kept whole on their own lines', () => {
    const visit = { id: 'v', n: 1, modality: 'MRI', status: 'report_uploaded' };
    for (const reference of [`R-240001${'x'.repeat(40)}`, '\u{1B000}'.repeat(40), '\u{18D00}'.repeat(30)]) {
      const line = lineOf(reference, visit, 60);
      for (const l of line.split('\n')) expect(displayWidth(l), l).toBeLessThanOrEqual(60);
      expect(line).toContain('\u2026');
      expect(line).toContain('booked \u2192 report_uploaded');
    }
  });

  it('a long reference keeps the visit and modality: they go under it, with the statuses', () => {
    const visit = { id: 'v', n: 1, modality: 'PET-CT Whole Body Oncology', status: 'complete' };
    const reference = 'R-2024-WORKERSCOMP-GEORGIA-ATLANTA-NORTHSIDE-000123';
    expect(lineOf(reference, visit, 80).split('\n')).toEqual([
      `2026-11-27 10:00:00 UTC  ${reference}`,
      '  visit 1 PET-CT Whole Body Oncology  booked \u2192 complete',
    ]);
  });

  it('a status wider than the view itself (none the API defines) is cut too: no line wraps', () => {
    const line = lineOf('R-LONG', { id: 'v', n: 1, modality: 'MRI', status: 'x'.repeat(150) }, 80);
    for (const l of line.split('\n')) expect(displayWidth(l), l).toBeLessThanOrEqual(80);
    expect(line).toContain('booked \u2192');
    expect(line).toMatch(/ {2}x+\u2026$/);
    // The other way round, the arrow stays after the cut status.
    const back = changeLine(
      {
        at: new Date('2026-11-27T10:00:00Z'),
        watched: {
          id: 'i',
          reference: 'R-LONG',
          patient: undefined,
          visits: [],
          standing: undefined,
          changedAt: undefined,
          problem: undefined,
        },
        visit: { id: 'v', n: 1, modality: 'MRI', status: 'booked' },
        previous: 'x'.repeat(150),
      },
      'UTC',
      80,
    ).text;
    for (const l of back.split('\n')) expect(displayWidth(l), l).toBeLessThanOrEqual(80);
    expect(back).toMatch(/ {2}x+\u2026 \u2192\n {2}booked$/);
  });

  it('a live frame is never taller than the screen, whatever a status holds: the cursor gets back to its top', () => {
    for (const [status, width, height] of [
      ['awaiting_prior_authorization_from_the_carrier_'.repeat(14), 80, 24],
      ['\u4e2d'.repeat(160), 80, 12],
    ] as const) {
      const visit = { id: 'v', n: 1, modality: 'MRI', status };
      const watched = {
        id: '33333333-3333-4333-8333-333333333333',
        reference: 'R-WIDE',
        patient: 'Lopez, Maria',
        visits: [visit],
        standing: 'waiting' as const,
        changedAt: new Date('2026-11-27T10:00:00Z'),
        problem: undefined,
      };
      const change = { at: new Date('2026-11-27T10:00:00Z'), watched, visit, previous: 'booked' };
      const recent = [0, 1, 2].map(() => changeLine(change, 'UTC', width));
      let written = '';
      const sink = new Writable({
        write(chunk, _enc, done) {
          written += String(chunk);
          done();
        },
      });
      new LiveTable(sink, width, height, false, 'UTC').draw(
        [watched],
        'Watching 1 referral',
        'Ctrl-C stops',
        recent,
      );
      const frame = written
        .replace(/\u001b\[[0-9;]*[A-Za-z]/g, '')
        .split('\n')
        .slice(0, -1);
      expect(frame.length).toBeLessThanOrEqual(height);
      for (const l of frame) expect(displayWidth(l), l).toBeLessThanOrEqual(width);
      expect(frame[0]).toBe('Watching 1 referral');
    }
  });

  it('cutToWidth keeps wide characters whole and counts the ellipsis', () => {
    expect(cutToWidth('abcdef', 4)).toBe('abc\u2026');
    expect(cutToWidth('界界界', 4)).toBe('界\u2026');
    expect(cutToWidth('abc', 3)).toBe('abc');
  });
});
