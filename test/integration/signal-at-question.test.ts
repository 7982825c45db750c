import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mockFixture, run, tempDir } from '../helpers.js';
import { CLI, openPane, type Pane } from '../terminal.js';

/**
 * A stop signal sent with `kill` while the binary waits at a y/N question (the sandbox cost
 * question, the production questions of `referrals create` and `imaging api`) ends the question at
 * once with the signal's exit code. Seen: SIGINT, SIGHUP and SIGQUIT left it waiting until a second
 * signal or an answer. Real signals to the real binary, at a real terminal (tmux).
 */

type Finished = (fn: () => Promise<void>) => void;
/**
 * An emulator of its own for one test (its request log that test's alone): the tests run
 * concurrently, each mostly waiting on its process.
 */
async function own(finished: Finished) {
  const fx = mockFixture({ referrals: 300 });
  await fx.start();
  finished(() => fx.stop());
  return fx;
}

const CODES = { INT: 130, HUP: 129, QUIT: 131, TERM: 143 } as const;
type Sig = keyof typeof CODES;

/** Runs the CLI in a pane under a shell that writes its pid and then becomes the CLI (exec). */
async function atQuestion(args: string, env: NodeJS.ProcessEnv, dir: string) {
  const pidFile = join(dir, 'pid');
  const pane = await openPane({
    cols: 200,
    command: `sh -c 'echo $$ > "${pidFile}"; exec ${CLI} ${args}'`,
    env,
  });
  const lines = await pane.waitForScreen((l) => l.some((x) => x.endsWith('[y/N]')));
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return { pane, pid, lines };
}

/** The question's line stays as asked (nothing typed after it) and the next words start a line. */
async function afterQuestion(pane: Pane): Promise<string[]> {
  const lines = await pane.screen();
  const asked = lines.findIndex((l) => l.includes('[y/N]'));
  expect(lines[asked]).toMatch(/\[y\/N\]$/);
  return lines.slice(asked + 1);
}

let n = 0;
describe.concurrent('a stop signal at the sandbox cost question', () => {
  it.for(['INT', 'HUP', 'TERM', 'QUIT'] as Sig[])(
    'kill -%s: ends the question at once, exit 128 + its number, nothing more sent, no file',
    async (sig, { onTestFinished }) => {
      const fx = await own(onTestFinished);
      const env = fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: `mock-sigq-${process.pid}-${++n}` });
      await run(['auth', 'allowance', '--used', '1800'], { env }); // 59 more of ≈199 left: asks
      const dir = tempDir();
      const target = join(dir.path, 'r.csv');
      const { pane, pid } = await atQuestion(`referrals export --per-page 5 -o "${target}"`, env, dir.path);
      try {
        process.kill(pid, `SIG${sig}`);
        expect(await pane.exited()).toBe(CODES[sig]);
        // Said as for a signal during the pages: the line is ended, then "interrupted" once.
        expect((await afterQuestion(pane)).filter(Boolean)).toEqual(['interrupted']);
        expect(fx.apiRequests()).toHaveLength(1);
        expect(readdirSync(dir.path)).toEqual(['pid']);
      } finally {
        await pane.close();
        dir.cleanup();
      }
    },
  );
});

describe.concurrent("a stop signal at imaging api's and referrals create's production question", () => {
  const prod = (fx: Awaited<ReturnType<typeof own>>) =>
    fx.env({
      IMAGING_ENV: 'production',
      IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
      IMAGING_TOKEN: 'mock-prod',
    });

  it.for(['INT', 'HUP', 'TERM'] as Sig[])(
    'imaging api PATCH, kill -%s: exit 128 + its number, nothing sent',
    async (sig, { onTestFinished }) => {
      const fx = await own(onTestFinished);
      const dir = tempDir();
      const { pane, pid } = await atQuestion(
        'api PATCH /referrals/3212c76a-c27e-4ca2-9e90-bb9c865c1630 -f note=hello',
        prod(fx),
        dir.path,
      );
      try {
        process.kill(pid, `SIG${sig}`);
        expect(await pane.exited()).toBe(CODES[sig]);
        // The line after the question is ended, then the stop is said once (main's own "\ninterrupted").
        expect((await afterQuestion(pane)).filter(Boolean)).toEqual(['interrupted']);
        expect(fx.apiRequests()).toHaveLength(0);
      } finally {
        await pane.close();
        dir.cleanup();
      }
    },
  );

  it('referrals create, kill -HUP: exit 129, nothing sent', async ({ onTestFinished }) => {
    const fx = await own(onTestFinished);
    const dir = tempDir();
    const file = join(dir.path, 'referral.json');
    writeFileSync(file, '{"patient_id":"p"}');
    const { pane, pid } = await atQuestion(`referrals create --file "${file}"`, prod(fx), dir.path);
    try {
      process.kill(pid, 'SIGHUP');
      expect(await pane.exited()).toBe(129);
      // The line after the question is ended, then the stop is said once (main's own "\ninterrupted").
      expect((await afterQuestion(pane)).filter(Boolean)).toEqual(['interrupted']);
      expect(fx.apiRequests()).toHaveLength(0);
    } finally {
      await pane.close();
      dir.cleanup();
    }
  });
});

describe.concurrent("a stop signal at auth login's hidden token prompt", () => {
  it('kill -TERM: exit 143 at once, nothing stored, nothing sent', async ({ onTestFinished }) => {
    const fx = await own(onTestFinished);
    const dir = tempDir();
    const configDir = join(dir.path, 'config');
    const pidFile = join(dir.path, 'pid');
    const pane = await openPane({
      cols: 200,
      command: `sh -c 'echo $$ > "${pidFile}"; exec ${CLI} auth login'`,
      env: fx.env({ IMAGING_CONFIG_DIR: configDir }),
    });
    try {
      await pane.waitForScreen((l) => l.some((x) => x.includes('API token for local')));
      process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGTERM');
      expect(await pane.exited()).toBe(143);
      expect((await pane.screen()).join('\n')).toContain('interrupted');
      expect(readdirSync(dir.path)).toEqual(['pid']);
      expect(fx.apiRequests()).toHaveLength(0);
    } finally {
      await pane.close();
      dir.cleanup();
    }
  });
});
