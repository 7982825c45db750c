/**
 * An exact set of record ids that stays small with hundreds of thousands of them: a canonical UUID
 * is kept as its 128 bits in an open-addressing table (one table per letter case, so "ABC…" and
 * "abc…" stay apart), any other id in a Set<string>.
 */
export class IdSet {
  private readonly lower = new UuidTable();
  private readonly upper = new UuidTable();
  private readonly other = new Set<string>();
  private readonly words = new Uint32Array(4);

  get size(): number {
    return this.lower.size + this.upper.size + this.other.size;
  }

  add(id: string): boolean {
    const table = this.parse(id);
    if (table) return table.add(this.words);
    if (this.other.has(id)) return false;
    this.other.add(id);
    return true;
  }

  has(id: string): boolean {
    const table = this.parse(id);
    return table ? table.has(this.words) : this.other.has(id);
  }

  private parse(id: string): UuidTable | undefined {
    if (id.length !== 36) return undefined;
    let lower = false;
    let upper = false;
    let w = 0;
    let nibbles = 0;
    for (let i = 0; i < 36; i++) {
      const c = id.charCodeAt(i);
      if (i === 8 || i === 13 || i === 18 || i === 23) {
        if (c !== 45) return undefined; // '-'
        continue;
      }
      let v: number;
      if (c >= 48 && c <= 57) v = c - 48;
      else if (c >= 97 && c <= 102) {
        v = c - 87;
        lower = true;
      } else if (c >= 65 && c <= 70) {
        v = c - 55;
        upper = true;
      } else return undefined;
      w = (w << 4) | v;
      nibbles++;
      if ((nibbles & 7) === 0) {
        this.words[(nibbles >> 3) - 1] = w >>> 0;
        w = 0;
      }
    }
    if (lower && upper) return undefined; // mixed case: kept as text, so it stays exact
    return upper ? this.upper : this.lower;
  }
}

/** Open addressing with linear probing over 4 × uint32 a slot; grows at 3/4 full. */
class UuidTable {
  size = 0;
  private capacity = 0;
  private keys = new Uint32Array(0);
  private used = new Uint8Array(0);

  has(k: Uint32Array): boolean {
    return this.capacity > 0 && this.find(k) >= 0;
  }

  add(k: Uint32Array): boolean {
    if ((this.size + 1) * 4 > this.capacity * 3) this.grow();
    const mask = this.capacity - 1;
    let i = hash(k[0]!, k[1]!, k[2]!, k[3]!) & mask;
    for (;;) {
      if (!this.used[i]) {
        this.used[i] = 1;
        this.keys.set(k, i * 4);
        this.size++;
        return true;
      }
      if (this.equals(i, k)) return false;
      i = (i + 1) & mask;
    }
  }

  private find(k: Uint32Array): number {
    const mask = this.capacity - 1;
    let i = hash(k[0]!, k[1]!, k[2]!, k[3]!) & mask;
    while (this.used[i]) {
      if (this.equals(i, k)) return i;
      i = (i + 1) & mask;
    }
    return -1;
  }

  private equals(slot: number, k: Uint32Array): boolean {
    const o = slot * 4;
    const keys = this.keys;
    return keys[o] === k[0] && keys[o + 1] === k[1] && keys[o + 2] === k[2] && keys[o + 3] === k[3];
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldUsed = this.used;
    const oldCapacity = this.capacity;
    this.capacity = oldCapacity === 0 ? 1024 : oldCapacity * 2;
    this.keys = new Uint32Array(this.capacity * 4);
    this.used = new Uint8Array(this.capacity);
    this.size = 0;
    const k = new Uint32Array(4);
    for (let s = 0; s < oldCapacity; s++) {
      if (!oldUsed[s]) continue;
      k.set(oldKeys.subarray(s * 4, s * 4 + 4));
      this.add(k);
    }
  }
}

function hash(a: number, b: number, c: number, d: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ b, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16) ^ c, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ d, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
