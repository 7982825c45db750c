import { closeSync, openSync, writeFileSync } from 'node:fs';
import { isatty } from 'node:tty';
import { afterAll, describe, expect, it } from 'vitest';
import { isTerminal } from '../../src/util/terminal.js';
import { tempDir } from '../helpers.js';

// isTerminal answers without node:tty when the descriptor is no character device; it must agree
// with tty.isatty on every kind of descriptor. (A real terminal is tried by the tmux tests of
// test/integration/terminal.test.ts, through the binary.)
describe('isTerminal (src/util/terminal.ts)', () => {
  const dir = tempDir('imaging-isterminal-');
  afterAll(() => dir.cleanup());

  it('is false, as isatty, for /dev/null, a regular file, a closed descriptor and a negative one', () => {
    const file = `${dir.path}/f.txt`;
    writeFileSync(file, 'x');
    for (const path of ['/dev/null', file]) {
      const fd = openSync(path, 'r');
      try {
        expect(isTerminal(fd), path).toBe(false);
        expect(isTerminal(fd)).toBe(isatty(fd));
      } finally {
        closeSync(fd);
      }
    }
    const closed = openSync(file, 'r');
    closeSync(closed);
    expect(isTerminal(closed)).toBe(false);
    expect(isTerminal(-1)).toBe(false);
  });

  it("agrees with isatty on this process's own descriptors (pipes under the test runner)", () => {
    for (const fd of [0, 1, 2]) expect(isTerminal(fd), `fd ${fd}`).toBe(isatty(fd));
  });
});
