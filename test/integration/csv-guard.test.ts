import { afterEach, describe, expect, it } from 'vitest';
import { json, run, testServer } from '../helpers.js';

/**
 * Issue 8 item 8: the CSV header row of reference and list commands comes from server keys; a
 * hostile server (started here on 127.0.0.1) sending formula keys gets them guarded like cells.
 */

let srv: Awaited<ReturnType<typeof testServer>> | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

const HOSTILE = {
  id: 'm-1',
  '=HYPERLINK("http://evil.example","click")': 'x',
  '@SUM(1+1)': 'y',
  '\u00a0=1+1': 'z',
  '\uff1d1+1': 'w',
};

describe('CSV headers from server keys are guarded like cells', () => {
  // The documented fields come first (issue 9 item 14), then the server's other keys, sorted.
  it.for([
    ['modalities', ['modalities'], [HOSTILE], 'id,name,slug'],
    [
      'icd10 (a paginated list)',
      ['icd10', 'x'],
      { icd10_codes: [HOSTILE], meta: { current_page: 1 } },
      'id,code,short_description',
    ],
    [
      'law-firms create (one record)',
      ['law-firms', 'create', '--name', 'N', '--city', 'C', '--state', 'NY'],
      {
        law_firm: HOSTILE,
      },
      'id,name,address_line_1,address_line_2,city,state,zipcode',
    ],
  ] as const)('%s --format csv', async ([, argv, answer, documented]) => {
    srv = await testServer((_req, res) => json(res, 200, answer));
    const r = await run([...argv, '--format', 'csv'], {
      env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: '/nonexistent' },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const header = r.stdout.split('\r\n')[0]!;
    expect(header).toBe(
      `${documented},"'=HYPERLINK(""http://evil.example"",""click"")",'@SUM(1+1),'\u00a0=1+1,'\uff1d1+1`,
    );
  });
});

/**
 * --bom and --no-formula-guard change CSV only: a command that never writes CSV refuses them
 * (exit 2, before it does anything) instead of accepting them silently. The real binary for the first
 * command, the same check in-process for the others.
 */
describe('--bom and --no-formula-guard on a command that writes no CSV', () => {
  it.for([
    ['cache', 'path'],
    ['config', 'path'],
    ['config', 'set', 'env', 'production'],
    ['completion', 'bash'],
    ['webhook', 'sign', '--body', '-'],
  ])('imaging %s %s: exit 2 for each', async (words) => {
    const { cli, tempDir } = await import('../helpers.js');
    const real = words[0] === 'cache';
    const dir = tempDir();
    try {
      for (const flag of ['--bom', '--no-formula-guard']) {
        const r = await cli(real, [...words, flag], { env: { IMAGING_CONFIG_DIR: dir.path }, input: '{}' });
        expect(r.exitCode, r.stderr).toBe(2);
        expect(r.stderr).toMatch(
          new RegExp(`^error: ${flag} is for CSV output, and imaging [a-z ]+ writes no CSV$`, 'm'),
        );
        expect(r.stdout).toBe('');
      }
      // config set did not run: nothing was written.
      const { readdirSync } = await import('node:fs');
      expect(readdirSync(dir.path)).toEqual([]);
    } finally {
      dir.cleanup();
    }
  });

  it('a command that writes CSV without --fields (config list, auth status) still takes them', async () => {
    const { spawnCli } = await import('../helpers.js');
    const r = await spawnCli(['auth', 'status', '--format', 'csv', '--bom', '--no-formula-guard']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.startsWith('\ufeffenvironment,')).toBe(true);
    const c = await spawnCli(['config', 'list', '--format', 'csv', '--bom']);
    expect(c.exitCode, c.stderr).toBe(0);
  });
});
