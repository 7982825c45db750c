// The yardstick for a lookup's start-up: a plain node:http script making the request that
// `imaging cpt 73721 --json` makes and printing the answer as indented JSON, and nothing else (no
// config, no checks, no cache). What it costs over a bare `node -e 0` is Node's own HTTP client,
// which any Node tool making that request pays (docs/speed.md).
//   node scripts/plain-http.cjs http://127.0.0.1:PORT      (against `imaging mock --port PORT`)
'use strict';
const http = require('node:http');

const fail = (message, code = 1) => {
  process.stderr.write(`plain-http: ${message}\n`);
  process.exit(code);
};
const base = process.argv[2];
if (!base || !/^http:\/\//.test(base)) fail('usage: node scripts/plain-http.cjs http://HOST:PORT', 2);
http
  .get(
    `${base}/api/v2/cpt_codes?code=73721`,
    { headers: { accept: 'application/json', authorization: 'Bearer mock-token' } },
    (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) fail(`HTTP ${res.statusCode} from ${base} (is it \`imaging mock\`?)`);
        try {
          const value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
        } catch {
          fail(`the answer from ${base} is not JSON`);
        }
      });
    },
  )
  .on('error', (err) => fail(`cannot reach ${base}: ${err.code ?? err.message}`));
