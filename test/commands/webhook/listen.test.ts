import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InterruptedError } from '../../../src/errors.js';
import { main } from '../../../src/main.js';
import { saveDelivery } from '../../../src/webhook/save.js';
import { signatureHeaderValue } from '../../../src/webhook/sign.js';
import { expectUsageError, hasEscapes, PIPED, piped, plain, TERMINAL, widest } from '../../fake-io.js';
import { fakeIO, json, run, tempDir, testServer } from '../../helpers.js';
import { AUTO_BOOK_EVENT, secretFileFixture, VISIT_EVENT } from '../../webhook-fixture.js';

const SECRET = 'whsec_listen_host';
const files = secretFileFixture(SECRET);
const BODY = Buffer.from(JSON.stringify(VISIT_EVENT));

/** POSTs a signed delivery to 127.0.0.1:port with the given Host header (as a rebound page or a tunnel sends it). */
function deliver(port: number, host: string): Promise<{ status: number; body: string }> {
  const ts = String(Math.floor(Date.now() / 1000));
  const headers = {
    host,
    'content-type': 'application/json',
    'X-Service-Event': 'visit.status_changed',
    'X-Service-Timestamp': ts,
    'X-Service-Signature': signatureHeaderValue(Buffer.from(SECRET), ts, BODY, 'hex'),
  };
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/hooks', headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

async function listen(args: string[], terminal = false) {
  const ac = new AbortController();
  const fake = fakeIO({ stdoutIsTTY: terminal });
  const done = main(
    ['webhook', 'listen', '--port', '0', '--json', '--secret-file', files.secretFile, ...args],
    {
      io: fake.io,
      env: {},
      signal: ac.signal,
    },
  );
  let port = 0;
  for (let i = 0; i < 100 && !port; i++) {
    port = Number(/Listening for webhooks on http:\/\/127\.0\.0\.1:(\d+)/.exec(fake.stderr())?.[1] ?? 0);
    if (!port) await new Promise((r) => setTimeout(r, 20));
  }
  stops.push(() => {
    ac.abort(new InterruptedError('SIGINT'));
    return done;
  });
  return { port, out: fake.stdout, err: fake.stderr };
}

describe('webhook listen: what anyone who reaches the port sends, on a terminal', () => {
  it('--json lines carry no control or bidi character from a delivery (escaped, the same data)', async () => {
    const l = await listen([], true);
    const event = 'x\u009b2J\u202eevil';
    const status = await new Promise<number>((resolve, reject) => {
      // A page can send this: a text/plain POST needs no preflight.
      const req = request(
        {
          host: '127.0.0.1',
          port: l.port,
          method: 'POST',
          path: '/',
          headers: { 'content-type': 'text/plain', origin: 'https://evil.example' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ event_name: event }));
    });
    expect(status).toBeGreaterThanOrEqual(400);
    for (let i = 0; i < 100 && !l.out(); i++) await new Promise((r) => setTimeout(r, 20));
    const line = l.out();
    expect(line).not.toMatch(/[\u0080-\u009f\u202e]/);
    expect(line).toContain('\\u009b2J\\u202e');
    expect(JSON.parse(line).event).toBe(event);
  });
});

describe('webhook listen: a delivery accepted unsigned', () => {
  it('--allow-unsigned: an unsigned auto-book delivery is accepted and shown UNSIGNED, never valid', async () => {
    const ac = new AbortController();
    const fake = fakeIO();
    const done = main(
      ['webhook', 'listen', '--port', '0', '--allow-unsigned', '--secret-file', files.secretFile],
      { io: fake.io, env: {}, signal: ac.signal },
    );
    stops.push(() => {
      ac.abort(new InterruptedError('SIGINT'));
      return done;
    });
    let port = 0;
    for (let i = 0; i < 100 && !port; i++) {
      port = Number(/Listening for webhooks on http:\/\/127\.0\.0\.1:(\d+)/.exec(fake.stderr())?.[1] ?? 0);
      if (!port) await new Promise((r) => setTimeout(r, 20));
    }
    const body = JSON.stringify(AUTO_BOOK_EVENT);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/hooks',
          headers: { 'content-type': 'application/json', 'X-Service-Event': 'referral.auto_book_completed' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(200);
    for (let i = 0; i < 100 && !fake.stdout(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(fake.stdout()).toMatch(/ {2}UNSIGNED {2}referral\.auto_book_completed/);
    expect(fake.stdout()).not.toMatch(/\bvalid\b/);
    // Stopped: the count says it was accepted unsigned, not valid.
    await stops.pop()!();
    expect(fake.stdout() + fake.stderr()).toContain(
      '1 delivery: 0 valid, 1 unsigned (accepted with --allow-unsigned), 0 not valid',
    );
  });
});

describe('webhook listen: the Host a delivery is addressed to', () => {
  it('accepts 127.0.0.1:PORT and localhost:PORT', async () => {
    const l = await listen([]);
    expect((await deliver(l.port, `127.0.0.1:${l.port}`)).status).toBe(200);
    expect((await deliver(l.port, `localhost:${l.port}`)).status).toBe(200);
  });

  it('refuses any other name (a page rebound to 127.0.0.1), naming --allow-host, and says so once on stderr', async () => {
    const l = await listen([]);
    const r = await deliver(l.port, `attacker.example:${l.port}`);
    expect(r.status).toBe(421);
    expect(r.body).toContain('--allow-host attacker.example');
    await deliver(l.port, `attacker.example:${l.port}`);
    expect((await deliver(l.port, `localhost:${l.port + 1}`)).status).toBe(421);
    // Nothing was taken as a delivery.
    expect(l.out()).toBe('');
    const notes = l.err().match(/refused a request addressed to "attacker\.example:\d+"/g) ?? [];
    expect(notes).toHaveLength(1);
    expect(l.err()).toContain('add --allow-host attacker.example');
  });

  it('--allow-host NAME (repeatable) accepts a tunnel host at any port; NAME:PORT only at that port', async () => {
    const l = await listen(['--allow-host', 'Hooks.Tunnel.example', '--allow-host', 'other.example:8443']);
    expect((await deliver(l.port, 'hooks.tunnel.example')).status).toBe(200);
    expect((await deliver(l.port, 'hooks.tunnel.example:443')).status).toBe(200);
    expect((await deliver(l.port, 'other.example:8443')).status).toBe(200);
    expect((await deliver(l.port, 'other.example')).status).toBe(421);
    expect((await deliver(l.port, 'evil.tunnel.example')).status).toBe(421);
    expect(l.out().trim().split('\n')).toHaveLength(3);
  });

  it('--allow-host refuses something that is not a host name (exit 2)', async () => {
    const r = await run(['webhook', 'listen', '--port', '0', '--allow-host', 'https://x.example/']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--allow-host takes a host name');
  });
});

describe('webhook listen --save DIR', () => {
  const mode = (p: string) => statSync(p).mode & 0o777;

  it('makes a missing DIR 0700, keeps each delivery as a 0600 raw capture that webhook verify --request accepts', async () => {
    const base = tempDir();
    try {
      const dir = join(base.path, 'captures');
      const l = await listen(['--save', dir]);
      expect(l.err()).toContain(`Saving each delivery in ${dir}`);
      expect(l.err()).toContain('Deliveries from production carry patient data');
      expect(mode(dir)).toBe(0o700);
      expect((await deliver(l.port, `127.0.0.1:${l.port}`)).status).toBe(200);
      expect((await deliver(l.port, `127.0.0.1:${l.port}`)).status).toBe(200);
      const saved = readdirSync(dir).sort();
      expect(saved).toHaveLength(2);
      const records = l
        .out()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(records.map((r) => r.saved).sort()).toEqual(saved.map((f) => join(dir, f)));
      for (const f of saved) {
        const path = join(dir, f);
        expect(mode(path)).toBe(0o600);
        expect(readFileSync(path).subarray(-BODY.length).equals(BODY)).toBe(true);
        const v = await run(['webhook', 'verify', '--request', path, '--secret-file', files.secretFile]);
        expect(v.code).toBe(0);
      }
    } finally {
      base.cleanup();
    }
  });

  it('uses an existing DIR as it is, warning when others can read it', async () => {
    const base = tempDir();
    try {
      const dir = join(base.path, 'open');
      mkdirSync(dir);
      chmodSync(dir, 0o755);
      const l = await listen(['--save', dir]);
      expect(l.err()).toMatch(/warning: --save .*open can be read by others \(mode 755\)/);
      expect(mode(dir)).toBe(0o755);
      expect((await deliver(l.port, `127.0.0.1:${l.port}`)).status).toBe(200);
      expect(readdirSync(dir)).toHaveLength(1);
    } finally {
      base.cleanup();
    }
  });

  it("never writes over a file or through a link already at a capture's name", () => {
    const base = tempDir();
    try {
      const d = {
        receivedAt: '2026-01-02T03:04:05.678Z',
        request: {
          method: 'POST',
          target: '/hooks',
          headers: [['Host', 'x']] as Array<[string, string]>,
          body: BODY,
        },
      } as Parameters<typeof saveDelivery>[1];
      const first = join(base.path, '2026-01-02T03-04-05-678Z-0001.http');
      writeFileSync(first, 'mine');
      const victim = join(base.path, 'victim');
      writeFileSync(victim, 'untouched');
      symlinkSync(victim, join(base.path, '2026-01-02T03-04-05-678Z-0001-1.http'));
      const path = saveDelivery(base.path, d, 1);
      expect(path).toBe(join(base.path, '2026-01-02T03-04-05-678Z-0001-2.http'));
      expect(readFileSync(first, 'utf8')).toBe('mine');
      expect(readFileSync(victim, 'utf8')).toBe('untouched');
      expect(mode(path)).toBe(0o600);
    } finally {
      base.cleanup();
    }
  });

  it.skipIf(process.getuid?.() !== 0)(
    "refuses another user's DIR (exit 2), warns when others can change it",
    async () => {
      const base = tempDir();
      try {
        chmodSync(base.path, 0o755);
        // Another user's folder in a shared scratch folder, open to all.
        const shared = join(base.path, 'shared');
        mkdirSync(shared);
        chmodSync(shared, 0o1777);
        const theirs = join(shared, 'theirs');
        execFileSync('setpriv', [
          '--reuid=nobody',
          '--regid=nogroup',
          '--clear-groups',
          'mkdir',
          '-m',
          '0777',
          theirs,
        ]);
        const r = await run([
          'webhook',
          'listen',
          '--port',
          '0',
          '--save',
          theirs,
          '--secret-file',
          files.secretFile,
        ]);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`--save ${theirs} belongs to nobody`);
        expect(readdirSync(theirs)).toEqual([]);
        // A folder to be made inside theirs: they could swap it for a link to a folder of theirs.
        const inside = join(theirs, 'sub');
        const made = await run([
          'webhook',
          'listen',
          '--port',
          '0',
          '--save',
          inside,
          '--secret-file',
          files.secretFile,
        ]);
        expect(made.code).toBe(2);
        expect(made.stderr).toContain(`--save ${inside}: `);
        expect(made.stderr).toContain('belongs to nobody, who could move');
        expect(readdirSync(theirs)).toEqual([]);
        const open = join(base.path, 'open');
        mkdirSync(open);
        chmodSync(open, 0o733);
        const l = await listen(['--save', open]);
        expect(l.err()).toMatch(/warning: --save .*open can be changed by others \(mode 733\)/);
      } finally {
        base.cleanup();
      }
    },
  );

  it('stops saving after 1,000 files, with one warning; deliveries are still printed', async () => {
    const base = tempDir();
    try {
      const dir = join(base.path, 'flood');
      const l = await listen(['--save', dir]);
      for (let i = 0; i < 1003; i++) expect((await deliver(l.port, `127.0.0.1:${l.port}`)).status).toBe(200);
      expect(readdirSync(dir)).toHaveLength(1000);
      expect(l.err().match(/--save stopped saving in .* after 1,000 deliveries/g)).toHaveLength(1);
      expect(l.out().trim().split('\n')).toHaveLength(1003);
    } finally {
      base.cleanup();
    }
  }, 60_000);

  it('refuses a DIR whose parent does not exist, before listening (exit 2)', async () => {
    const r = await run(['webhook', 'listen', '--port', '0', '--save', '/nonexistent-parent/captures']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the folder cannot be made');
  });
});

describe('imaging webhook listen', () => {
  const sf = secretFileFixture('whsec_command_listen');

  /** Runs `webhook listen` in-process, sends it one good and one unsigned delivery, then stops it as Ctrl-C would. */
  async function listen(form: typeof TERMINAL | typeof PIPED, ...more: string[]) {
    const ac = new AbortController();
    const fake = fakeIO(form);
    const done = main(['webhook', 'listen', '--port', '0', '--secret-file', sf.secretFile, ...more], {
      io: fake.io,
      env: {},
      signal: ac.signal,
    });
    let url = '';
    for (let i = 0; i < 400 && !url; i++) {
      url = /Listening for webhooks on (http:\/\/\S+)/.exec(plain(fake.stderr()))?.[1] ?? '';
      if (!url) await new Promise((r) => setTimeout(r, 5));
    }
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    const good = await run([
      'webhook',
      'send',
      'visit.status_changed',
      '--to',
      url,
      '--secret-file',
      sf.secretFile,
    ]);
    expect(good.code).toBe(0);
    const unsigned = await fetch(url, {
      method: 'POST',
      body: JSON.stringify({ event_name: 'visit.status_changed' }),
      headers: { 'content-type': 'application/json', 'X-Service-Event': 'visit.status_changed' },
    });
    expect(unsigned.status).toBe(400);
    ac.abort(new InterruptedError('SIGINT'));
    return { code: await done, stdout: fake.stdout(), stderr: fake.stderr() };
  }

  it('prints one line per delivery, valid or not, in both forms; Ctrl-C stops it with 130', async () => {
    for (const form of [TERMINAL, PIPED]) {
      const r = await listen(form);
      expect(r.code).toBe(130);
      const out = plain(r.stdout);
      // One delivery per entry, each starting with its time; at 80 columns an entry may wrap.
      const entries = out
        .split(/\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ {2})/)
        .map((e) => e.replace(/\s+/g, ' ').trim());
      expect(entries).toHaveLength(2);
      expect(entries[0]).toMatch(
        /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ valid visit\.status_changed event [0-9a-f-]{36} /,
      );
      expect(entries[1]).toContain(
        'INVALID visit.status_changed unsigned delivery; there is no X-Service-Signature or X-Service-Timestamp header',
      );
      if (form === TERMINAL) expect(widest(r.stdout)).toBeLessThanOrEqual(80);
      else expect(out.trimEnd().split('\n')).toHaveLength(2);
      if (form === PIPED) expect(hasEscapes(r.stdout + r.stderr)).toBe(false);
      expect(r.stdout + r.stderr).not.toContain('whsec_command_listen');
    }
  });

  it('with --json, one JSON object per delivery', async () => {
    const r = await listen(PIPED, '--json');
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(2);
    expect(rows.map((x) => x.valid)).toEqual([true, false]);
  });

  it('refuses a bad port, tolerance or forward URL before listening', async () => {
    expectUsageError(
      await piped(['webhook', 'listen', '--port', '70000', '--secret-file', sf.secretFile]),
      /--port/,
      0,
    );
    expectUsageError(
      await piped(['webhook', 'listen', '--tolerance', 'x', '--secret-file', sf.secretFile]),
      /--tolerance/,
      0,
    );
    expectUsageError(
      await piped(['webhook', 'listen', '--forward-to', 'ftp://x', '--secret-file', sf.secretFile]),
      /--forward-to/,
      0,
    );
  });
});

describe('webhook listen: an unsigned delivery is said once', () => {
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });

  afterEach(() => dir.cleanup());

  it('the line reads "unsigned delivery; there is no … header", not "unsigned delivery; unsigned: …"', async () => {
    const secret = join(dir.path, 'secret.txt');
    writeFileSync(secret, 'test_secret_123\n');
    const ac = new AbortController();
    const fake = fakeIO();
    const done = main(['webhook', 'listen', '--port', '0', '--secret-file', secret], {
      io: fake.io,
      env: {},
      signal: ac.signal,
    });
    let url = '';
    // Polls for the line that says it listens (a condition, not a fixed wait).
    for (let i = 0; i < 400 && !url; i++) {
      url = /Listening for webhooks on (http:\/\/\S+)/.exec(fake.stderr())?.[1] ?? '';
      if (!url) await new Promise((r) => setTimeout(r, 5));
    }
    const body = JSON.stringify({ event_name: 'visit.status_changed' });
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'X-Service-Event': 'visit.status_changed' },
    });
    expect(res.status).toBe(400);
    ac.abort(new InterruptedError('SIGINT'));
    await done;
    const line = fake.stdout().trim().split('\n')[0]!;
    expect(line).toContain(
      'unsigned delivery; there is no X-Service-Signature or X-Service-Timestamp header',
    );
    expect(line).not.toMatch(/unsigned delivery; unsigned/);
  });
});

describe('webhook listen', () => {
  const SECRET = 'whsec_test_SECRET_value_9f8e7d';

  const NOW = new Date('2026-11-21T19:00:12Z');

  const TS = String(Math.floor(NOW.getTime() / 1000) - 12);

  const files = secretFileFixture(SECRET);

  const event = VISIT_EVENT;

  const BODY = Buffer.from(JSON.stringify(event));

  const sig = (body: Buffer = BODY, ts = TS, secret = SECRET) =>
    signatureHeaderValue(Buffer.from(secret), ts, body, 'hex');

  const servers: Array<{ close: () => Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  /** Runs `webhook listen` in-process until the returned stop() (as Ctrl-C would). */
  const listen = async (args: string[]) => {
    const ac = new AbortController();
    const { fakeIO } = await import('../../helpers.js');
    const fake = fakeIO();
    const { main } = await import('../../../src/main.js');
    const done = main(['webhook', 'listen', '--port', '0', '--secret-file', files.secretFile, ...args], {
      io: fake.io,
      env: {},
      signal: ac.signal,
    });
    let url = '';
    for (let i = 0; i < 100 && !url; i++) {
      url = /Listening for webhooks on (http:\/\/\S+)/.exec(fake.stderr())?.[1] ?? '';
      if (!url) await new Promise((r) => setTimeout(r, 20));
    }
    const { InterruptedError } = await import('../../../src/errors.js');
    return {
      url,
      out: fake.stdout,
      err: fake.stderr,
      stop: async () => {
        ac.abort(new InterruptedError('SIGINT'));
        return done;
      },
    };
  };
  const post = (url: string, body: Buffer, headers: Record<string, string>) =>
    fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const signedHeaders = (body = BODY) => {
    const ts = String(Math.floor(Date.now() / 1000));
    return {
      'X-Service-Event': 'visit.status_changed',
      'X-Service-Timestamp': ts,
      'X-Service-Signature': sig(body, ts),
    };
  };

  it('answers 200 for a valid delivery and 400 with the reason for an invalid one; notes duplicates; stops with 130', async () => {
    const l = await listen([]);
    const ok = await post(l.url, BODY, signedHeaders());
    expect(ok.status).toBe(200);
    const again = await post(l.url, BODY, signedHeaders());
    expect(await again.json()).toMatchObject({ ok: true, duplicate: true });
    const bad = await post(l.url, BODY, {
      ...signedHeaders(),
      'X-Service-Signature': `v1=${'0'.repeat(64)}`,
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { problems: string[] }).problems).toContain('the signature does not match');
    const code = await l.stop();
    expect(code).toBe(130);
    const lines = l.out().trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ {2}valid {4}visit\.status_changed {2}event 9b2d8f3e/,
    );
    expect(lines[1]).toContain('(duplicate delivery)');
    expect(lines[2]).toMatch(
      /INVALID {2}visit\.status_changed {2}signature does not match \(timestamp \d+ s old\)/,
    );
    // Said once: the problem the headline already names is not repeated after it.
    expect(lines[2]!.match(/signature does not match/g)).toHaveLength(1);
    expect(l.err()).toContain('Stopped. 3 deliveries: 2 valid, 1 not valid, 1 duplicate.');
  });

  it('prints NDJSON with --json', async () => {
    const l = await listen(['--json']);
    await post(l.url, BODY, signedHeaders());
    await l.stop();
    expect(JSON.parse(l.out())).toMatchObject({
      valid: true,
      event: 'visit.status_changed',
      duplicate: false,
      response_status: 200,
    });
  });

  it('forwards the exact bytes and headers with --forward-to and reports the status', async () => {
    const target = await testServer((_req, res) => json(res, 202, { thanks: true }));
    servers.push(target);
    const l = await listen(['--forward-to', `${target.url}/partner/hook`, '--path', '/in']);
    const headers = signedHeaders();
    const res = await post(l.url, BODY, headers);
    expect(res.status).toBe(202);
    expect((await fetch(l.url.replace('/in', '/other'), { method: 'POST', body: '{}' })).status).toBe(404);
    await l.stop();
    expect(target.seen).toHaveLength(1);
    expect(target.seen[0]!.url).toBe('/partner/hook');
    expect(target.seen[0]!.body).toBe(BODY.toString());
    expect(target.seen[0]!.headers['x-service-signature']).toBe(headers['X-Service-Signature']);
    expect(l.out()).toContain('-> 202');
  });

  it('--forward-to a target that answers 200 then streams forever: the sender still gets the 200', async () => {
    // A raw TCP target on 127.0.0.1: the head, then body bytes as fast as the socket takes them.
    const sockets = new Set<import('node:net').Socket>();
    const target = createNetServer((sock) => {
      sockets.add(sock);
      sock.on('error', () => {});
      sock.once('data', () => {
        sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n');
        const chunk = Buffer.alloc(16 * 1024, 'x');
        const pump = () => {
          while (!sock.destroyed && sock.write(chunk)) {}
        };
        sock.on('drain', pump);
        pump();
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', () => resolve()));
    servers.push({
      close: () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          target.close(() => resolve());
        }),
    });
    const port = (target.address() as import('node:net').AddressInfo).port;
    const l = await listen(['--forward-to', `http://127.0.0.1:${port}/hook`]);
    const res = await post(l.url, BODY, signedHeaders());
    expect(res.status).toBe(200);
    await l.stop();
    expect(l.out()).toContain('-> 200');
  });
});
