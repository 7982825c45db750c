import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockFixture, run } from '../../helpers.js';

const mock = mockFixture();
beforeAll(() => mock.start());
afterAll(() => mock.stop());

describe('cpt at 80 columns', () => {
  it('shows an enumerated value whole, leaving a column out instead of breaking it', async () => {
    const r = await run(['cpt', '70553'], {
      env: mock.env({ NO_COLOR: '1' }),
      stdoutIsTTY: true,
      columns: 80,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\bwithout_and_with_contrast\b/);
    for (const line of r.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(r.stderr).toMatch(/^Left out: .*\(--wide shows all\)$/m);
  });
});
