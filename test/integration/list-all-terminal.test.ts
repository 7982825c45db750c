import { afterAll, describe, expect, it } from 'vitest';
import { parseFault } from '../../src/emulator/faults.js';
import { ExitCode } from '../../src/errors.js';
import { mockFixture, tempDir } from '../helpers.js';
import { CLI, openPane, type Pane } from '../terminal.js';

/**
 * Issue 9 item 15 at a real terminal (a tmux pane of 80 columns): `list --all` shows the export's
 * progress line on stderr while its records go to a file or a pipe, clears it on Ctrl-C, shows none
 * when the records themselves scroll on that terminal, and after a failed page says the records
 * above are incomplete.
 */

const dir = tempDir();
afterAll(() => dir.cleanup());

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
const cmd = (args: string[]) => `${CLI} ${args.map(quote).join(' ')}`;
type Finished = (fn: () => Promise<void>) => void;
/**
 * A pane of its own for one test, against an emulator of its own (its faults that test's alone):
 * the tests run concurrently, each closing what it opened when it ends.
 */
async function inPane(command: string, finished: Finished) {
  const slow = mockFixture({ referrals: 3000, latencyMs: 150 });
  await slow.start();
  finished(() => slow.stop());
  const pane = await openPane({ cols: 80, command, env: slow.env() });
  finished(() => pane.close());
  return { pane, slow };
}
// 150 pages of 20, one at a time at 150 ms: long enough to read the line and press Ctrl-C.
const list = (format: string) => [
  'referrals',
  'list',
  '--all',
  '--format',
  format,
  '--per-page',
  '20',
  '--concurrency',
  '1',
];
const progressLine = (lines: string[]) => lines.find((l) => / pages? /.test(l) && /\/s\b/.test(l));
const showsProgressWithEta = (lines: string[]) => /ETA \d/.test(progressLine(lines) ?? '');
/** Nothing of the bar is left on screen (the "^C" a terminal echoes included), the cursor is back. */
const expectClean = async (pane: Pane, lines: string[]) => {
  expect(lines.filter((l) => /\d+\/\d+ pages|records {2}|\^C|Listing referrals/.test(l))).toEqual([]);
  expect(await pane.cursorVisible()).toBe(true);
};

describe.concurrent('referrals list --all: the progress line at 80 columns', () => {
  it.for(['ndjson', 'json', 'csv'])(
    '--format %s into a file: fits with room for "^C", then Ctrl-C clears it',
    async (format, { onTestFinished }) => {
      const { pane } = await inPane(
        `${cmd(list(format))} > ${quote(`${dir.path}/out.${format}`)}`,
        onTestFinished,
      );
      const line = progressLine(await pane.waitForScreen(showsProgressWithEta))!;
      expect(line.length).toBeLessThanOrEqual(77);
      expect(line).toMatch(/\d+\/150 pages {2}[\d,]+ records {2}[\d,]+\/s {2}ETA \d+(m\d\ds|s)$/);
      await pane.keys('C-c');
      expect(await pane.exited()).toBe(130);
      const lines = await pane.screen();
      expect(lines).toContain('interrupted');
      await expectClean(pane, lines);
    },
  );

  it('the table, collected before it is shown: the line while pages come, then Ctrl-C clears it', async ({
    onTestFinished,
  }) => {
    const { pane } = await inPane(cmd(list('table')), onTestFinished);
    await pane.waitForScreen(showsProgressWithEta);
    await pane.keys('C-c');
    expect(await pane.exited()).toBe(130);
    await expectClean(pane, await pane.screen());
  });

  it('NDJSON onto the terminal itself: the records scroll, no line is drawn between them', async ({
    onTestFinished,
  }) => {
    const { pane } = await inPane(cmd(list('ndjson')), onTestFinished);
    await pane.waitForScreen((lines) => lines.filter((l) => l.startsWith('{"id":')).length >= 40);
    const lines = await pane.screen();
    expect(progressLine(lines)).toBeUndefined();
    // Every record line is whole but the last: the screen is read while records still come, and the
    // last one may be half written at that moment.
    const records = lines.filter((x) => x.startsWith('{'));
    expect(records.length).toBeGreaterThanOrEqual(40);
    for (const l of records.slice(0, -1)) expect(() => JSON.parse(l)).not.toThrow();
    await pane.keys('C-c');
    expect(await pane.exited()).toBe(130);
  });

  it('a page that fails after records were shown: the error, and "the output above is incomplete"', async ({
    onTestFinished,
  }) => {
    const { pane, slow } = await inPane(cmd(list('ndjson')), onTestFinished);
    await pane.waitForScreen((lines) => lines.some((l) => l.startsWith('{"id":')));
    // From now on the emulator refuses the token: the next page fails (not retried).
    slow.mock.faults.add(parseFault('401', '/api/v2/referrals'));
    expect(await pane.exited()).toBe(ExitCode.auth);
    const text = (await pane.screen()).join('\n');
    expect(text).toMatch(/Listing stopped after [\d,]+ referrals: the output above is incomplete\./);
    await expectClean(pane, await pane.screen());
  });
});
