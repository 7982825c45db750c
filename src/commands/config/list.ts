import { defineCommand } from '../../cli/define.js';
import { ENVIRONMENTS } from '../../config/environments.js';
import { maskToken } from '../../config/store.js';
import { write } from '../../output/write.js';
import type { Row } from './keys.js';

export default defineCommand({
  path: ['config', 'list'],
  csv: true,
  async run(ctx) {
    const stored = ctx.config.read();
    const rows: Row[] = [{ key: 'env', environment: '', value: stored.env ?? '' }];
    for (const env of ENVIRONMENTS) {
      const s = stored.environments?.[env];
      if (s?.base_url) rows.push({ key: 'base-url', environment: env, value: s.base_url });
      for (const [kind, path] of Object.entries(s?.paths ?? {}))
        if (typeof path === 'string') rows.push({ key: `path.${kind}`, environment: env, value: path });
      if (s?.token) rows.push({ key: 'token', environment: env, value: maskToken(s.token) });
      if (s?.token && s.token_origin)
        rows.push({ key: 'token-origin', environment: env, value: s.token_origin });
    }
    const format = ctx.format('table');
    const shown = rows.filter((r) => r.value !== '');
    await write(shown, {
      sink: ctx.sink(),
      format,
      columns: [
        { header: 'Key', get: (r) => r.key, priority: 1, fit: 'keep' },
        { header: 'Environment', get: (r) => r.environment || '(all)', priority: 2, fit: 'keep' },
        { header: 'Value', get: (r) => r.value, priority: 3, fit: 'keep' },
      ],
      emptyHint: `Nothing is stored yet (${ctx.config.path}).`,
    });
    return 0;
  },
});
