import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, run, spawnCli, tempDir, testServer } from '../helpers.js';

/**
 * A stored token is bound to the origin (scheme, host, port) it was stored for. Two servers on
 * 127.0.0.1 are two origins (different ports): a token stored for the first must never reach the
 * second, however the base URL is pointed there (IMAGING_BASE_URL, --base-url, config set).
 */

const TOKEN = 'prod-secret-TOKEN-5d81e0aa';
const MODALITIES = [{ id: '0b9f3c1e-8a51-4c35-9d0e-2b7a4c6e1f00', name: 'MRI', slug: 'mri' }];

type Server = Awaited<ReturnType<typeof testServer>>;
let legit: Server;
let other: Server;
beforeAll(async () => {
  legit = await testServer((_req, res) => json(res, 200, MODALITIES, { 'x-request-id': 'req-legit' }));
  other = await testServer((_req, res) => json(res, 200, MODALITIES, { 'x-request-id': 'req-other' }));
});
afterAll(async () => {
  await legit.close();
  await other.close();
});

let cfg: ReturnType<typeof tempDir>;
beforeEach(() => {
  cfg = tempDir();
  legit.seen.length = 0;
  other.seen.length = 0;
});
afterEach(() => cfg.cleanup());

const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: cfg.path, ...extra });
const prod = ['--env', 'production'];
const configFile = () => join(cfg.path, 'config.json');
const stored = () => JSON.parse(readFileSync(configFile(), 'utf8'));

async function loginToLegit() {
  const r = await run([...prod, 'auth', 'login', '--with-token', '--base-url', legit.url], {
    env: env(),
    stdin: `${TOKEN}\n`,
  });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`it is sent only to ${legit.url}`);
  legit.seen.length = 0;
}

describe('a stored token goes only to the origin it was stored for', () => {
  it('auth login --base-url binds the token to that origin', async () => {
    await loginToLegit();
    expect(stored().environments.production).toEqual({
      token: TOKEN,
      base_url: legit.url,
      token_origin: legit.url,
    });
    const r = await run([...prod, 'modalities', '--json'], { env: env() });
    expect(r.code).toBe(0);
    expect(legit.seen).toHaveLength(1);
    expect(legit.seen[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('IMAGING_BASE_URL pointing at another server: exit 3, that server sees no request (real binary)', async () => {
    await loginToLegit();
    const r = await spawnCli([...prod, 'modalities'], {
      env: env({ IMAGING_BASE_URL: other.url }),
    });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain(
      `error: the stored production token belongs to ${legit.url}, not to ${other.url} (the base URL from IMAGING_BASE_URL): it is never sent to another server`,
    );
    expect(r.stderr).toContain('set IMAGING_TOKEN for a one-off');
    expect(r.stderr).toContain(`imaging auth login --env production --base-url ${other.url}`);
    expect(r.stderr + r.stdout).not.toContain(TOKEN);
    expect(other.seen).toHaveLength(0);
    expect(legit.seen).toHaveLength(0);
  });

  it('--base-url pointing at another server: exit 3, nothing sent', async () => {
    await loginToLegit();
    const r = await run([...prod, '--base-url', other.url, 'modalities'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('(the base URL from --base-url)');
    expect(other.seen).toHaveLength(0);
  });

  it('a different scheme or port of the same host is another origin; a path prefix is not', async () => {
    await loginToLegit();
    const otherPort = await run([...prod, '--base-url', `http://127.0.0.1:${other.port}/`, 'modalities'], {
      env: env(),
    });
    expect(otherPort.code).toBe(3);
    const https = await run([...prod, '--base-url', `https://127.0.0.1:${legit.port}`, 'modalities'], {
      env: env(),
    });
    expect(https.code).toBe(3);
    expect(https.stderr).toContain(`not to https://127.0.0.1:${legit.port}`);
    expect(other.seen).toHaveLength(0);
    // Same origin with a path prefix: allowed, the prefix is kept.
    const prefixed = await run([...prod, '--base-url', `${legit.url}/gateway/api/v2`, 'modalities'], {
      env: env(),
    });
    expect(prefixed.code).toBe(0);
    expect(legit.seen.map((s) => s.url)).toEqual(['/gateway/api/v2/modalities']);
  });

  it('config set base-url to another origin is allowed, says the token stays behind, and then refuses', async () => {
    await loginToLegit();
    const set = await run([...prod, 'config', 'set', 'base-url', other.url], { env: env() });
    expect(set.code).toBe(0);
    expect(set.stderr).toContain(
      `Note: the stored production token belongs to ${legit.url} and will not be sent to ${other.url}. Log in for the new base URL: imaging auth login --env production`,
    );
    const r = await run([...prod, 'modalities'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('(the base URL from config)');
    expect(r.stderr).toContain('hint: Log in for the new base URL: imaging auth login --env production;');
    expect(other.seen).toHaveLength(0);
    // A path change on the same origin says nothing and keeps working.
    await run([...prod, 'config', 'set', 'base-url', legit.url], { env: env() });
    const same = await run([...prod, 'config', 'set', 'base-url', `${legit.url}/v`], { env: env() });
    expect(same.stderr).not.toContain('Note:');
  });

  it('auth login does not send a new token to another origin that came only from IMAGING_BASE_URL', async () => {
    await loginToLegit();
    const r = await run([...prod, 'auth', 'login', '--with-token'], {
      env: env({ IMAGING_BASE_URL: other.url }),
      stdin: 'new-secret-token-9999\n',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `error: IMAGING_BASE_URL (${other.url}) is another origin than the stored base-url of production (${legit.url})`,
    );
    expect(other.seen).toHaveLength(0);
    expect(stored().environments.production.token).toBe(TOKEN);
    // Named with --base-url, it is the user's choice: verified there and bound there.
    const named = await run([...prod, 'auth', 'login', '--with-token', '--base-url', other.url], {
      env: env({ IMAGING_BASE_URL: other.url }),
      stdin: 'new-secret-token-9999\n',
    });
    expect(named.code).toBe(0);
    expect(stored().environments.production.token_origin).toBe(other.url);
  });

  it('IMAGING_TOKEN still goes wherever the user points it', async () => {
    await loginToLegit();
    const r = await run([...prod, 'modalities', '--json'], {
      env: env({ IMAGING_BASE_URL: other.url, IMAGING_TOKEN: 'one-off-token-1234' }),
    });
    expect(r.code).toBe(0);
    expect(other.seen).toHaveLength(1);
    expect(other.seen[0]?.headers.authorization).toBe('Bearer one-off-token-1234');
  });

  it('--env local keeps working with no login (the emulator token is not a secret)', async () => {
    const r = await run(['--env', 'local', '--base-url', other.url, 'modalities', '--json'], { env: env() });
    expect(r.code).toBe(0);
    expect(other.seen[0]?.headers.authorization).toBe('Bearer mock-token');
  });
});

describe('a config written before tokens were bound', () => {
  it('binds the token on first use to the stored base URL, says so once, and then refuses other origins', async () => {
    writeFileSync(
      configFile(),
      JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
      { mode: 0o600 },
    );
    const first = await run([...prod, 'modalities', '--json'], { env: env() });
    expect(first.code).toBe(0);
    expect(first.stderr).toContain(
      `Note: the stored production token had no origin recorded (a config from an older version); it is now bound to ${legit.url} (the stored base-url of production) and will be sent only there.`,
    );
    expect(stored().environments.production.token_origin).toBe(legit.url);
    const second = await run([...prod, 'modalities', '--json'], { env: env() });
    expect(second.code).toBe(0);
    expect(second.stderr).not.toContain('Note:');
    const attack = await run([...prod, 'modalities'], { env: env({ IMAGING_BASE_URL: other.url }) });
    expect(attack.code).toBe(3);
    expect(other.seen).toHaveLength(0);
  });

  it('a hostile IMAGING_BASE_URL on first use does not capture the binding when a base URL is stored', async () => {
    writeFileSync(
      configFile(),
      JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
    );
    const r = await run([...prod, 'modalities'], { env: env({ IMAGING_BASE_URL: other.url }) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`it is now bound to ${legit.url}`);
    expect(other.seen).toHaveLength(0);
  });

  it('without a stored base URL, IMAGING_BASE_URL or --base-url never binds it: exit 3, nothing sent (D5)', async () => {
    const old = JSON.stringify({ environments: { production: { token: TOKEN } } });
    writeFileSync(configFile(), old);
    for (const how of [
      { env: env({ IMAGING_BASE_URL: other.url }), args: [] },
      { env: env(), args: ['--base-url', other.url] },
    ]) {
      const r = await run([...prod, ...how.args, 'modalities'], { env: how.env });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('error: the stored production token has no origin recorded yet');
      expect(r.stderr).toContain(`imaging config set base-url ${other.url} --env production`);
      expect(r.stderr).toContain('set IMAGING_TOKEN');
      expect(r.stderr + r.stdout).not.toContain(TOKEN);
    }
    expect(other.seen).toHaveLength(0);
    expect(readFileSync(configFile(), 'utf8')).toBe(old);
  });

  it('config set base-url binds an unbound token with no stored base URL to the URL typed, and says so (D5)', async () => {
    writeFileSync(configFile(), JSON.stringify({ environments: { production: { token: TOKEN } } }));
    const set = await run([...prod, 'config', 'set', 'base-url', legit.url], { env: env() });
    expect(set.code).toBe(0);
    expect(set.stderr).toContain(`it is now bound to ${legit.url} and will be sent only there`);
    expect(stored().environments.production).toEqual({
      token: TOKEN,
      base_url: legit.url,
      token_origin: legit.url,
    });
    const r = await run([...prod, 'modalities', '--json'], { env: env() });
    expect(r.code).toBe(0);
    expect(legit.seen).toHaveLength(1);
  });

  it('local never sends a stored real token: the emulator token goes, the config is left alone', async () => {
    const old = JSON.stringify({ environments: { local: { token: TOKEN } } });
    writeFileSync(configFile(), old);
    const r = await run(['--env', 'local', 'modalities', '--json'], {
      env: env({ IMAGING_BASE_URL: other.url }),
    });
    expect(r.code).toBe(0);
    expect(other.seen.map((s) => s.headers.authorization)).toEqual(['Bearer mock-token']);
    expect(readFileSync(configFile(), 'utf8')).toBe(old);
  });

  it('config unset base-url keeps the old token bound to the base URL it had (D4)', async () => {
    writeFileSync(
      configFile(),
      JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
    );
    const unset = await run([...prod, 'config', 'unset', 'base-url'], { env: env() });
    expect(unset.code).toBe(0);
    expect(unset.stderr).toContain(`it stays bound to ${legit.url}`);
    expect(stored().environments.production).toEqual({ token: TOKEN, token_origin: legit.url });
    const r = await run([...prod, 'modalities'], { env: env({ IMAGING_BASE_URL: other.url }) });
    expect(r.code).toBe(3);
    expect(other.seen).toHaveLength(0);
  });

  it('auth status --check binds an unbound token before sending it, so another origin gets nothing', async () => {
    writeFileSync(
      configFile(),
      JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
    );
    const r = await run([...prod, 'auth', 'status', '--check'], {
      env: env({ IMAGING_BASE_URL: other.url }),
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`it is now bound to ${legit.url}`);
    expect(r.stdout).toContain('not sent: the token belongs to another origin');
    expect(other.seen).toHaveLength(0);
    expect(stored().environments.production.token_origin).toBe(legit.url);
  });

  it('config set base-url binds an unbound token to the old base URL before changing it', async () => {
    writeFileSync(
      configFile(),
      JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
    );
    const set = await run([...prod, 'config', 'set', 'base-url', other.url], { env: env() });
    expect(set.stderr).toContain(`belongs to ${legit.url} and will not be sent to ${other.url}`);
    const r = await run([...prod, 'modalities'], { env: env() });
    expect(r.code).toBe(3);
    expect(other.seen).toHaveLength(0);
  });
});

describe('a config edited by hand', () => {
  it('an origin written differently (case, trailing slash) is compared as an origin', async () => {
    writeFileSync(
      configFile(),
      JSON.stringify({
        environments: {
          production: { token: TOKEN, base_url: legit.url, token_origin: `${legit.url.toUpperCase()}/` },
        },
      }),
    );
    const r = await run([...prod, 'modalities', '--json'], { env: env() });
    expect(r.code).toBe(0);
    expect(legit.seen).toHaveLength(1);
  });

  it.for<[string, (u: string) => string]>([
    ['a trailing slash', (u) => `${u}/`],
    ['an upper-case scheme', (u) => u.replace('http:', 'HTTP:')],
    ['127.1 for 127.0.0.1', (u) => u.replace('127.0.0.1', '127.1')],
    ['a path', (u) => `${u}/api/v2`],
  ])('auth status compares %s as requests do (D6)', async ([, edit]) => {
    writeFileSync(
      configFile(),
      JSON.stringify({
        environments: { production: { token: TOKEN, base_url: legit.url, token_origin: edit(legit.url) } },
      }),
    );
    const status = await run([...prod, 'auth', 'status', '--check'], { env: env() });
    expect(status.stdout).not.toContain('not sent');
    expect(status.stdout).toContain(legit.url);
    expect(status.code).toBe(0);
    const r = await run([...prod, 'modalities', '--json'], { env: env() });
    expect(r.code).toBe(0);
    expect(legit.seen).toHaveLength(2);
  });

  it('a token that is not text is no token: exit 3 naming the key and the fix, nothing sent', async () => {
    writeFileSync(
      configFile(),
      JSON.stringify({ environments: { production: { token: { a: 1 }, base_url: legit.url } } }),
    );
    const r = await run([...prod, 'modalities'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('"environments.production.token" is an object, not text');
    expect(r.stderr).toContain('hint: Run: imaging auth login --env production');
    expect(legit.seen).toHaveLength(0);
  });
});

describe('auth status shows the origin each token belongs to', () => {
  it('table and --json; a token bound elsewhere is marked and --check sends nothing (exit 3)', async () => {
    await loginToLegit();
    const table = await run(['auth', 'status'], { env: env() });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/TOKEN ORIGIN/);
    expect(table.stdout).toMatch(new RegExp(`production .*\\*\\*\\*\\*e0aa \\(config\\)\\s+${legit.url}`));
    expect(table.stdout).toMatch(/local .*emulator default\)\s+any \(not stored\)/);
    const js = JSON.parse((await run(['auth', 'status', '--json'], { env: env() })).stdout);
    expect(js.find((x: { environment: string }) => x.environment === 'production')).toMatchObject({
      token_origin: legit.url,
      token_usable: true,
    });
    const elsewhere = await run([...prod, 'auth', 'status', '--check'], {
      env: env({ IMAGING_BASE_URL: other.url }),
    });
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stdout).toContain(`${legit.url} (not this base URL: not sent)`);
    expect(elsewhere.stdout).toContain('not sent: the token belongs to another origin');
    expect(other.seen).toHaveLength(0);
  });

  it('config list shows the origin next to the masked token', async () => {
    await loginToLegit();
    const r = await run(['config', 'list'], { env: env() });
    expect(r.stdout).toMatch(new RegExp(`token-origin\\s+production\\s+${legit.url}`));
    expect(r.stdout).not.toContain(TOKEN);
  });

  it('logout forgets the origin with the token', async () => {
    await loginToLegit();
    await run([...prod, 'auth', 'logout'], { env: env() });
    expect(stored().environments.production).toEqual({ base_url: legit.url });
  });
});

describe('a token that cannot be an HTTP header value: exit 3 before any request, never echoed', () => {
  const bad: Array<[string, string, RegExp]> = [
    ['CR', 'SECRETpartA\rSECRETpartB', /carriage return \(CR\) at character 12/],
    ['LF', 'SECRETpartA\nSECRETpartB', /line feed \(LF\) at character 12/],
    ['NUL', 'SECRETpartA\u0000SECRETpartB', /NUL character at character 12/],
    ['non-Latin-1', 'SECRETpartA\u2019SECRETpartB', /character outside Latin-1 \(U\+2019\) at character 12/],
    ['emoji', 'SECRETpartA\u{1F511}SECRETpartB', /character outside Latin-1 \(U\+1F511\) at character 12/],
  ];

  it.for(bad)('%s in IMAGING_TOKEN', async ([, token, why]) => {
    const r = await run([...prod, '--base-url', other.url, 'modalities'], {
      env: env({ IMAGING_TOKEN: token }),
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^error: the token in IMAGING_TOKEN cannot be sent: it contains /);
    expect(r.stderr).toMatch(why);
    expect(r.stderr + r.stdout).not.toMatch(/SECRETpart/);
    expect(r.stderr).not.toMatch(/unexpected failure|Invalid character/);
    expect(other.seen).toHaveLength(0);
  });

  it.for(bad)('%s in the stored config', async ([, token, why]) => {
    writeFileSync(
      configFile(),
      JSON.stringify({
        environments: { production: { token, base_url: other.url, token_origin: other.url } },
      }),
    );
    const r = await run([...prod, 'modalities'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^error: the stored production token cannot be sent: it contains /);
    expect(r.stderr).toMatch(why);
    expect(r.stderr).toContain('imaging auth login --env production --with-token');
    expect(r.stderr + r.stdout).not.toMatch(/SECRETpart/);
    expect(other.seen).toHaveLength(0);
  });

  it('the real binary, a stored token with CR LF: one message, exit 3, no request', async () => {
    writeFileSync(
      configFile(),
      JSON.stringify({
        environments: {
          production: { token: 'SECRETpartA\r\nX', base_url: other.url, token_origin: other.url },
        },
      }),
    );
    const r = await spawnCli([...prod, 'modalities'], { env: env() });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/carriage return \(CR\) at character 12/);
    expect(r.stderr).not.toMatch(/SECRETpart|\n\s+at /);
    expect(other.seen).toHaveLength(0);
  });

  it('auth login refuses such a token without a request and stores nothing', async () => {
    const r = await run([...prod, 'auth', 'login', '--with-token', '--base-url', other.url], {
      env: env(),
      stdin: 'SECRETpartA\u2019SECRETpartB\n',
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('this token cannot be sent: it contains a character outside Latin-1 (U+2019)');
    expect(r.stderr).not.toMatch(/SECRETpart/);
    expect(other.seen).toHaveLength(0);
    expect(() => readFileSync(configFile())).toThrow();
  });
});
