import { createHmac, timingSafeEqual } from 'node:crypto';

export type DigestEncoding = 'hex' | 'base64';

/** The spec's header names; they stand in for the real ones, so every command lets users rename them. */
export const DEFAULT_HEADERS = {
  event: 'X-Service-Event',
  timestamp: 'X-Service-Timestamp',
  signature: 'X-Service-Signature',
} as const;

export type HeaderNames = Record<keyof typeof DEFAULT_HEADERS, string>;

export function computeDigest(key: Buffer, timestamp: string, body: Buffer): Buffer {
  return createHmac('sha256', key).update(`${timestamp}.`, 'utf8').update(body).digest();
}

export const encodeDigest = (digest: Buffer, encoding: DigestEncoding): string => digest.toString(encoding);

export function signatureHeaderValue(
  key: Buffer,
  timestamp: string,
  body: Buffer,
  encoding: DigestEncoding,
): string {
  return `v1=${encodeDigest(computeDigest(key, timestamp, body), encoding)}`;
}

/** The `v1=` values of a signature header: several may come (rotation). */
export function v1Values(header: string): string[] {
  return header
    .split(/[\s,]+/)
    .filter((part) => part.startsWith('v1='))
    .map((part) => part.slice(3));
}

/** Constant-time: only differing lengths answer early. */
function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(bb, bb);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/** The encoding in which `candidate` is the digest, if any. */
export function matchDigest(
  candidate: string,
  digest: Buffer,
  encoding: DigestEncoding | 'auto',
): DigestEncoding | undefined {
  const encodings = encoding === 'auto' ? (['hex', 'base64'] as const) : [encoding];
  return encodings.find((e) => safeEqual(candidate, digest.toString(e)));
}
