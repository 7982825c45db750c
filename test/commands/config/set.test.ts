import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectUsageError, onTerminal, piped } from '../../fake-io.js';
import { tempDir } from '../../helpers.js';

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.cleanup());
const env = () => ({ IMAGING_CONFIG_DIR: dir.path, IMAGING_ENV: 'local' });

describe('imaging config set', () => {
  it('stores a value, says so on stderr (both forms), in an owner-only file', async () => {
    const t = await onTerminal(['config', 'set', 'base-url', 'http://127.0.0.1:9/'], { env: env() });
    expect(t.code).toBe(0);
    expect(t.stdout).toBe('');
    expect(t.stderr).toBe('base-url for local set to http://127.0.0.1:9.\n');
    const p = await piped(['config', 'set', 'base-url', 'http://127.0.0.1:8', '--env', 'sandbox'], {
      env: env(),
    });
    expect(p.code).toBe(0);
    expect(p.stderr).toBe('base-url for sandbox set to http://127.0.0.1:8.\n');
    const file = join(dir.path, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain('http://127.0.0.1:8');
    expect((await piped(['config', 'get', 'base-url', '--env', 'sandbox'], { env: env() })).stdout).toBe(
      'http://127.0.0.1:8\n',
    );
  });

  it('refuses bad keys and values, and the token, without writing', async () => {
    const before = readFileSync(join(dir.path, 'config.json'), 'utf8');
    expectUsageError(
      await piped(['config', 'set', 'token', 'abc'], { env: env() }),
      /the token is not a config value/,
      0,
    );
    expectUsageError(
      await piped(['config', 'set', 'colour', 'red'], { env: env() }),
      /unknown config key "colour"/,
      0,
    );
    expectUsageError(await piped(['config', 'set', 'base-url', 'not a url'], { env: env() }), /base-url/, 0);
    expectUsageError(await piped(['config', 'set', 'env', 'staging'], { env: env() }), /staging/, 0);
    expectUsageError(await piped(['config', 'set', 'env'], { env: env() }), /missing required argument/, 0);
    expect(readFileSync(join(dir.path, 'config.json'), 'utf8')).toBe(before);
  });
});
