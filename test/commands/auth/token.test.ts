import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run, spawnCli, tempDir } from '../../helpers.js';

const TOKEN = 'prod-REAL-token-77aa88bb';
const STORED = 'sandbox-stored-token-1234';

let cfg: ReturnType<typeof tempDir>;
beforeEach(() => {
  cfg = tempDir();
  writeFileSync(
    join(cfg.path, 'config.json'),
    JSON.stringify({
      environments: {
        sandbox: {
          token: STORED,
          base_url: 'https://sandbox.example.com',
          token_origin: 'https://sandbox.example.com',
        },
      },
    }),
    { mode: 0o600 },
  );
});
afterEach(() => cfg.cleanup());
const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: cfg.path, ...extra });

describe('imaging auth token', () => {
  it('prints the stored token of the environment to a pipe, and nothing else (the real binary)', async () => {
    const r = await spawnCli(['auth', 'token'], { env: env() });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(STORED);
    expect(r.stderr).toBe('');
  });

  it('IMAGING_TOKEN wins over the stored token of the environment in use', async () => {
    const active = await run(['auth', 'token'], { env: env({ IMAGING_TOKEN: TOKEN }) });
    expect(active.stdout).toBe(`${TOKEN}\n`);
    const named = await run(['auth', 'token', '--env', 'production'], { env: env({ IMAGING_TOKEN: TOKEN }) });
    expect(named.stdout).toBe(`${TOKEN}\n`);
  });

  it('--env local prints the emulator token, never IMAGING_TOKEN, and says so once', async () => {
    const r = await run(['auth', 'token', '--env', 'local'], { env: env({ IMAGING_TOKEN: TOKEN }) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('mock-token\n');
    expect(r.stderr).toBe(
      "Note: IMAGING_TOKEN is set but not used: the local environment (the emulator) gets the emulator's token, never a real one.\n",
    );
  });

  it('not logged in: exit 3 with how to log in', async () => {
    const r = await run(['auth', 'token', '--env', 'production'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: not logged in to the production environment');
    expect(r.stderr).toContain('hint: Run: imaging auth login --env production');
  });

  it('on a terminal: exit 2 with a hint, nothing printed; --yes prints it', async () => {
    const r = await run(['auth', 'token'], { env: env(), stdoutIsTTY: true });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: the token is printed to a pipe or a file, not to a terminal');
    expect(r.stderr).toContain('add --yes to show it here');
    expect(r.stderr).not.toContain(STORED);
    const yes = await run(['auth', 'token', '--yes'], { env: env(), stdoutIsTTY: true });
    expect(yes.code).toBe(0);
    expect(yes.stdout).toBe(`${STORED}\n`);
  });
});
