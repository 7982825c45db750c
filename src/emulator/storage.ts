import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { documentPdf, EXPIRED_PAGE } from './data/documents.js';
import type { ReferralStore } from './data/referral-data.js';
import { decoded } from './router.js';

/**
 * The emulator's second origin, a file store as a cloud bucket is: it answers signed links only,
 * never looks at Authorization (it records whether one came), and an expired link gets a sign-in page.
 */

export interface StorageRequest {
  /** The path only: a signed link's query string is a credential. */
  path: string;
  authorization: boolean;
  status: number;
}

export interface Storage {
  url: string;
  requests: StorageRequest[];
  close(): Promise<void>;
}

export async function startStorage(referrals: ReferralStore, port: number, host: string): Promise<Storage> {
  const requests: StorageRequest[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const entry = { path: url.pathname, authorization: req.headers.authorization !== undefined, status: 0 };
    requests.push(entry);
    const send = (status: number, type: string, body: string | Buffer) => {
      entry.status = status;
      res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    };
    const [, files, id, kind, file] = url.pathname.split('/');
    const verdict = referrals.links?.check(url) ?? 'bad';
    if (req.method !== 'GET' || files !== 'files' || !id || !kind || !file || verdict === 'bad')
      return send(403, 'text/html; charset=utf-8', '<!doctype html><h1>403 Forbidden</h1>\n');
    if (verdict === 'expired') return send(200, 'text/html; charset=utf-8', EXPIRED_PAGE);
    const referral = referrals.get(id);
    // A malformed %-escape names no file: a 404, never an exception.
    const name = decoded(file);
    const pdf = referral && name !== undefined && documentPdf(referral, kind, name);
    if (!pdf) return send(404, 'text/html; charset=utf-8', '<!doctype html><h1>404 Not Found</h1>\n');
    send(200, 'application/pdf', pdf);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
