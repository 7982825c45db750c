import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import '../reliability.js';
import { BIN, cli, spawnCli } from '../helpers.js';
import { secretFileFixture } from '../webhook-fixture.js';

/**
 * --timeout is one deadline for the whole answer, not an idle timer that every byte resets: raw
 * TCP receivers on 127.0.0.1 that drip a header a byte at a time, or send interim 1xx answers
 * for ever, faster than the deadline, against the real binary of `webhook send` and of
 * `webhook listen --forward-to`. Then URL and --set inputs that used to go wrong: port 0 (Node
 * sends to port 80) and a 5000-level --set (a stack overflow).
 */
const SECRET = 'whsec-deadline-test-41d9';
const sf = secretFileFixture(SECRET);

/** A raw receiver: once a request's head has come, `onRequest` drives the socket. */
async function rawReceiver(onRequest: (socket: Socket, timers: NodeJS.Timeout[]) => void) {
  const sockets = new Set<Socket>();
  const timers: NodeJS.Timeout[] = [];
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    let seen = '';
    let started = false;
    socket.on('data', (c) => {
      seen += c.toString('latin1');
      if (started || !seen.includes('\r\n\r\n')) return;
      started = true;
      onRequest(socket, timers);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearInterval(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Every 50 ms, for ever: far inside a 300 ms idle timer, so only a deadline ends the wait. */
const drips: Record<string, (socket: Socket, timers: NodeJS.Timeout[]) => void> = {
  'a header one byte at a time': (socket, timers) => {
    socket.write('HTTP/1.1 200 OK\r\nX-A: ');
    timers.push(setInterval(() => socket.destroyed || socket.write('a'), 50));
  },
  '100 Continue for ever': (socket, timers) => {
    timers.push(setInterval(() => socket.destroyed || socket.write('HTTP/1.1 100 Continue\r\n\r\n'), 50));
  },
  '102 Processing for ever': (socket, timers) => {
    timers.push(setInterval(() => socket.destroyed || socket.write('HTTP/1.1 102 Processing\r\n\r\n'), 50));
  },
};

// Concurrently: each case has its own receiver and process, and mostly waits out its --timeout.
describe.concurrent('webhook send: --timeout bounds the whole answer', () => {
  it.for([
    ['a header one byte at a time', /no complete answer within 300 ms \(\d+ bytes of a status and headers/],
    ['100 Continue for ever', /no final answer within 300 ms \(only \d+ interim 1xx answers\)/],
    ['102 Processing for ever', /no final answer within 300 ms \(only \d+ interim 1xx answers\)/],
  ] as const)(
    'a receiver sending %s: exit 1 soon after --timeout 300, saying why',
    async ([drip, message], { expect }) => {
      const receiver = await rawReceiver(drips[drip]!);
      try {
        const started = Date.now();
        const r = await spawnCli([
          'webhook',
          'send',
          'visit.status_changed',
          '--to',
          receiver.url,
          '--unsigned',
          '--timeout',
          '300',
        ]);
        const took = Date.now() - started;
        expect(r.exitCode, r.stderr).toBe(1);
        // Before the fix this ran until the test's own 20 s kill; start-up of the binary is included.
        expect(took).toBeLessThan(5000);
        expect(r.stdout).toMatch(/^FAILED {5}visit\.status_changed .* no answer: /);
        expect(r.stderr).toMatch(message);
        expect(r.stderr).toMatch(/^hint: The receiver started answering but did not finish/m);
        expect(r.stderr).not.toMatch(/Is the receiver running/);
        // The connection is closed, not left to the receiver.
        await expect.poll(() => receiver.open(), { timeout: 2000 }).toBe(0);
      } finally {
        await receiver.close();
      }
    },
  );
});

describe('webhook listen --forward-to: a target that never finishes answering', () => {
  let listener: ChildProcessWithoutNullStreams | undefined;
  afterAll(() => {
    listener?.kill('SIGKILL');
  });

  it('the sender gets 504 once --timeout has passed, and the listener says so', async () => {
    const target = await rawReceiver(drips['102 Processing for ever']!);
    try {
      listener = spawn(
        process.execPath,
        [
          BIN,
          'webhook',
          'listen',
          '--port',
          '0',
          '--json',
          '--secret-file',
          sf.secretFile,
          '--forward-to',
          target.url,
          '--timeout',
          '300',
        ],
        { env: { PATH: process.env.PATH, IMAGING_CONFIG_DIR: '/nonexistent/imaging-test-config' } },
      );
      const l = listener;
      let out = '';
      l.stdout.on('data', (d) => {
        out += d;
      });
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        l.stderr.on('data', (d) => {
          err += d;
          const m = /on (http:\/\/\S+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        l.on('exit', () => reject(new Error(`listen exited: ${err}`)));
      });
      const started = Date.now();
      const send = await spawnCli([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        url,
        '--secret-file',
        sf.secretFile,
        '--timeout',
        '10000',
        '--json',
      ]);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(send.exitCode, send.stderr).toBe(1);
      expect(JSON.parse(send.stdout)[0]).toMatchObject({ status: 504, ok: false });
      expect(send.stderr).toMatch(/the receiver answered 504 Gateway Timeout, not a 2xx/);
      await expect.poll(() => out.includes('\n'), { timeout: 2000 }).toBe(true);
      const line = JSON.parse(out.split('\n')[0]!);
      expect(line).toMatchObject({ valid: true, response_status: 504 });
      expect(line.forwarded_status).toBe(`no answer from http://127.0.0.1:${target.port} within 300 ms`);
      await expect.poll(() => target.open(), { timeout: 2000 }).toBe(0);
    } finally {
      await target.close();
    }
  });
});

describe('port 0 is refused, not sent to port 80', () => {
  it.for([
    [['webhook', 'send', 'visit.status_changed', '--unsigned', '--to', 'http://127.0.0.1:0/'], '--to'],
    [['webhook', 'send', 'visit.status_changed', '--unsigned', '--to', 'https://127.0.0.1:00/x'], '--to'],
    [['webhook', 'listen', '--port', '0', '--forward-to', 'http://127.0.0.1:0/'], '--forward-to'],
    [['webhook', 'sign', '--body', '/dev/null', '--curl', 'http://127.0.0.1:0/'], '--curl'],
    [['mock', '--port', '0', '--webhook-url', 'http://127.0.0.1:0/'], '--webhook-url'],
    [['referrals', 'list', '--base-url', 'http://127.0.0.1:0'], '--base-url'],
  ] as const)('%j is exit 2', async ([argv, flag]) => {
    // The real binary for the first, in-process for the others.
    const r = await cli(flag === '--to' && argv.at(-1) === 'http://127.0.0.1:0/', [...argv], {
      env: { IMAGING_WEBHOOK_SECRET: SECRET, IMAGING_TOKEN: 'tok' },
    });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^error: ${flag}: port 0 is not a port anything listens on`, 'm'));
  });
});

describe('--set nesting is limited, not a stack overflow', () => {
  // The deepest value through the real binary (its own stack), the other two in-process.
  const send = (set: string, real = false) =>
    cli(real, ['webhook', 'send', 'visit.status_changed', '--print', '--unsigned', '--set', set]);

  it('a JSON value 5000 levels deep is exit 2 naming the limit', async () => {
    const r = await send(`x=${'['.repeat(5000)}${']'.repeat(5000)}`, true);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^error: --set x: the JSON value nests more than 64 levels deep/m);
    expect(r.stderr).not.toMatch(/Maximum call stack|unexpected failure/);
    expect(r.stdout).toBe('');
  });

  it('a path of 5000 segments is exit 2 naming the limit', async () => {
    const r = await send(`${Array(5000).fill('a').join('.')}=1`);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^error: --set: the path has 5000 segments; at most 64 are allowed/m);
    expect(r.stderr).not.toMatch(/Maximum call stack|unexpected failure/);
  });

  it('64 segments holding a 64-level value is within the limit and sent as asked', async () => {
    const r = await send(`${Array(64).fill('a').join('.')}=${'['.repeat(64)}${']'.repeat(64)}`);
    expect(r.exitCode, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout.split('\r\n\r\n')[1]!);
    let node = body;
    for (let i = 0; i < 64; i++) node = node.a;
    expect(JSON.stringify(node)).toBe(`${'['.repeat(64)}${']'.repeat(64)}`);
  });
});
