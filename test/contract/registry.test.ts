import { describe, expect, it } from 'vitest';
import { GLOBAL_OPTIONS } from '../../src/cli/globals.js';
import { takesValue } from '../../src/cli/options.js';
import { COMMANDS } from '../../src/registry.js';
import { mockFixture, ROOT, run } from '../helpers.js';

// The registry is what the parser, help, the "every command" tests and completion read: each entry
// must load, name itself as the registry does, build, and render its help.
describe('the command registry', () => {
  it.for(COMMANDS.map((c) => [c.path.join(' '), c] as const))(
    '%s loads, matches and renders help',
    async ([, entry]) => {
      const { default: def } = await entry.load();
      expect(def.path).toEqual(entry.path);
      expect(typeof def.run).toBe('function');
      const r = await run([...entry.path, '--help']);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain(`Usage: imaging ${entry.path.join(' ')}`);
      if (entry.path.length === 1) {
        // Root help prints the registry's usage for commands it did not load: it must be the real one.
        const args = ((def.args ?? []) as ReadonlyArray<{ name: string }>).map((a) => a.name);
        const real = [...(Object.keys(def.options ?? {}).length ? ['[options]'] : []), ...args].join(' ');
        expect(entry.usage ?? '').toBe(real);
      }
    },
  );

  it('every command file under src/commands/ is loaded by a registry entry (none left orphaned)', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join, relative } = await import('node:path');
    const root = join(ROOT, 'src', 'commands');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/export default defineCommand\(/.test(readFileSync(p, 'utf8'))) files.push(p);
      }
    };
    walk(root);
    const registry = readFileSync(join(ROOT, 'src', 'registry.ts'), 'utf8');
    const loaded = new Set([...registry.matchAll(/import\('\.\/commands\/([^']+)\.js'\)/g)].map((m) => m[1]));
    const orphans = files.map((f) => relative(root, f).replace(/\.ts$/, '')).filter((f) => !loaded.has(f));
    expect(files.length).toBeGreaterThan(20);
    expect(orphans).toEqual([]);
  });

  it('every command path is unique', () => {
    const paths = COMMANDS.map((c) => c.path.join(' '));
    expect(new Set(paths).size).toBe(paths.length);
  });
});

describe('global options come from their definitions', () => {
  const fx = mockFixture();
  const valued = Object.values(GLOBAL_OPTIONS).filter(takesValue);

  it('every value-taking global before the group leaves the group built (imaging --timeout 5000 referrals list --per-page 2)', async () => {
    await fx.start();
    try {
      const values: Record<string, string> = {
        '--env': 'local',
        '--base-url': fx.mock.url,
        '--format': 'json',
        '--timeout': '5000',
        '--fields': 'id',
      };
      for (const spec of valued) {
        const name = spec.flags.match(/--[\w-]+/)![0];
        const value = values[name];
        // A new value-taking global must be given a value here, so the test covers it.
        expect(value, `a test value for ${name}`).toBeDefined();
        const r = await run([name, value!, 'referrals', 'list', '--per-page', '2', '--json'], {
          env: fx.env(),
        });
        expect(r.stderr).not.toMatch(/unknown option/);
        expect(r.code, `${name}: ${r.stderr}`).toBe(0);
        expect(JSON.parse(r.stdout)).toHaveLength(2);
      }
    } finally {
      await fx.stop();
    }
  });
});
