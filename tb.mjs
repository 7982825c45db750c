import { spawnSync } from 'node:child_process';

const cmds = process.argv.slice(2).map((s) => s.split(' '));
const times = cmds.map(() => []);
for (let i = 0; i < 15; i++)
  cmds.forEach((c, j) => {
    const t = process.hrtime.bigint();
    spawnSync(c[0], c.slice(1));
    times[j].push(Number(process.hrtime.bigint() - t) / 1e6);
  });
times.forEach((t, j) => {
  t.sort((a, b) => a - b);
  console.log(cmds[j].join(' '), t[7].toFixed(1));
});
