import { describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, piped } from '../fake-io.js';

describe('imaging completion', () => {
  it.each([
    ['bash', /^# bash: add to ~\/\.bashrc/, /^_imaging_complete\(\) \{$/m],
    ['zsh', /^#/, /imaging/],
    ['fish', /^# fish:/, /^complete -c imaging -f -a '\(__imaging_complete\)'$/m],
    ['powershell', /^#/, /Register-ArgumentCompleter/],
  ])(
    'prints the %s script, byte for byte the same on a terminal and in a pipe',
    async (shell, head, body) => {
      const { terminal, piped: p } = await bothForms(['completion', shell]);
      expect(p.code).toBe(0);
      expect(p.stdout).toMatch(head);
      expect(p.stdout).toMatch(body);
      expect(p.stdout).not.toContain('\u001b');
      expect(terminal.stdout).toBe(p.stdout);
      expect(terminal.stderr + p.stderr).toBe('');
    },
  );

  it('names the shells it knows when given another', async () => {
    const r = await piped(['completion', 'tcsh']);
    expectUsageError(r, /no completion for "tcsh"/, 0);
    expect(r.stderr).toContain('bash, zsh, fish, powershell');
    expectUsageError(await piped(['completion']), /missing required argument 'shell'/, 0);
  });
});
