import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, run, tempDir, testServer } from '../helpers.js';

/**
 * `config set base-url` warns that the token will not be sent over plain http exactly when the
 * client will refuse to send it: one rule (isLoopbackHost) for both.
 */

let server: Awaited<ReturnType<typeof testServer>>;
let dir: ReturnType<typeof tempDir>;
beforeAll(async () => {
  server = await testServer((_req, res) => json(res, 200, { modalities: [] }));
});
afterAll(() => server.close());
beforeEach(() => {
  dir = tempDir();
  server.seen.length = 0;
  return () => dir.cleanup();
});
const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: dir.path, ...extra });

describe('config set base-url over plain http', () => {
  it('http://0.0.0.0:PORT: no warning, and the token is indeed sent there', async () => {
    const url = `http://0.0.0.0:${server.port}`;
    const set = await run(['config', 'set', 'base-url', url, '--env', 'production'], { env: env() });
    expect(set.code).toBe(0);
    expect(set.stderr).not.toContain('will not be sent');
    const r = await run(['--env', 'production', '--base-url', url, 'modalities', '--json'], {
      env: env({ IMAGING_TOKEN: 'prod-secret-token' }),
    });
    expect(r.code).toBe(0);
    expect(server.seen.map((s) => s.headers.authorization)).toContain('Bearer prod-secret-token');
  });

  it('http://localhost.evil: warned, and the token is refused there', async () => {
    const set = await run(
      ['config', 'set', 'base-url', 'http://localhost.evil:8080', '--env', 'production'],
      {
        env: env(),
      },
    );
    expect(set.code).toBe(0);
    expect(set.stderr).toContain('plain http. The token will not be sent to this host');
    const r = await run(['--env', 'production', 'modalities'], {
      env: env({ IMAGING_TOKEN: 'prod-secret-token' }),
    });
    expect(r.stderr).toContain('refusing to send the API token over plain http to localhost.evil:8080');
  });

  it('http://127.0.0.1:PORT: no warning', async () => {
    const set = await run(['config', 'set', 'base-url', server.url, '--env', 'production'], { env: env() });
    expect(set.stderr).not.toContain('will not be sent');
  });
});
