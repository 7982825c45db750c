/** A small seeded PRNG (mulberry32) so the emulator's data set is the same on every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0 || 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEX = '0123456789abcdef';

export function uuidFrom(rand: () => number): string {
  let h = '';
  for (let i = 0; i < 32; i++) {
    let d = Math.floor(rand() * 16);
    if (i === 12) d = 4;
    else if (i === 16) d = (d & 0x3) | 0x8;
    h += HEX[d];
    if (i === 7 || i === 11 || i === 15 || i === 19) h += '-';
  }
  return h;
}

export function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)] as T;
}
