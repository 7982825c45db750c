import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex } from '@noble/hashes/utils';

/**
 * SHA-256 of a text's UTF-8 bytes, as 64 lowercase hex digits: the same digest as Node's
 * `createHash('sha256').update(text).digest('hex')`, so names and keys made before are unchanged.
 *
 * For the keys every lookup computes (the reference cache's file names and token hashes, the
 * allowance meter's key). Loading `node:crypto` for them cost ~6 ms of each lookup's start on Node 24
 * (~20% of a bare `node -e 0`: it builds Node's whole crypto layer); hashing a few hundred bytes in
 * JavaScript (@noble/hashes) costs microseconds. Secrets that need a keyed or timing-safe primitive
 * (webhook HMACs) still use `node:crypto`.
 */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(Buffer.from(text, 'utf8')));
}
