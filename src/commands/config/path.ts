import { defineCommand } from '../../cli/define.js';

export default defineCommand({
  path: ['config', 'path'],
  async run(ctx) {
    ctx.io.stdout.write(`${ctx.config.path}\n`);
    return 0;
  },
});
