// The yardstick for a lookup's start-up: a plain node:http script making the request that
// `imaging cpt 73721 --json` makes and printing the answer as indented JSON, and nothing else (no
// config, no checks, no code cache). What it costs over a bare `node -e 0` is Node's own HTTP
// client, which any Node tool making that request pays (README "Speed").
//   node scripts/plain-http.cjs http://127.0.0.1:PORT      (against `imaging mock --port PORT`)
'use strict';
const http = require('node:http');

const base = process.argv[2];
if (!base) {
  process.stderr.write('usage: node scripts/plain-http.cjs BASE_URL\n');
  process.exit(2);
}
http.get(
  `${base}/api/v2/cpt_codes?code=73721`,
  { headers: { accept: 'application/json', authorization: 'Bearer mock-token' } },
  (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      process.stdout.write(
        `${JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')), null, 2)}\n`,
      );
    });
  },
);
