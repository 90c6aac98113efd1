// Helpers for the tests: a seeded random source, so a failing case can be replayed, and the
// shared files (test vectors) beside the repository.

import { existsSync, readFileSync } from 'node:fs';

/**
 * A deterministic generator of bytes and integers (xorshift128, 32-bit words). Not for keys.
 * @param {number} seed
 */
export function seededRandom(seed) {
  let x = 123456789 ^ seed, y = 362436069, z = 521288629, w = 88675123 ^ (seed * 2654435761);
  function next() {
    const t = x ^ (x << 11);
    x = y; y = z; z = w;
    w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    return w;
  }
  for (let i = 0; i < 16; i++) next();
  return {
    /** @returns {number} a 32-bit unsigned integer */
    next,
    /** @param {number} count @returns {Uint8Array} */
    bytes(count) {
      const out = new Uint8Array(count);
      for (let i = 0; i < count; i++) out[i] = next() >>> 24;
      return out;
    },
    /** @param {number} bound @returns {number} an integer from 0 to bound − 1 */
    below(bound) {
      return next() % bound;
    },
  };
}

/**
 * The text of `shared/<relative>`, found as the Swift tests find it: `HERDR_SHARED_DIR` when
 * set, else the first `shared/` walking up from this directory (the repository lives at
 * `<root>/main`, the shared files at `<root>/shared`), else the Swift Noise tests' own copy of
 * a vector file (`Tests/NoiseTests/Vectors/`).
 * @param {string} relative e.g. `vectors/noise-xk-vectors.json`
 * @returns {string}
 */
export function readShared(relative) {
  const override = process.env.HERDR_SHARED_DIR;
  if (override) return readFileSync(`${override.replace(/\/$/, '')}/${relative}`, 'utf8');
  let directory = new URL('./', import.meta.url);
  while (directory.pathname !== '/') {
    const candidate = new URL(`shared/${relative}`, directory);
    if (existsSync(candidate)) return readFileSync(candidate, 'utf8');
    directory = new URL('../', directory);
  }
  const copy = new URL(`../../Tests/NoiseTests/Vectors/${relative.split('/').pop()}`, import.meta.url);
  if (relative.startsWith('vectors/') && existsSync(copy)) return readFileSync(copy, 'utf8');
  throw new Error(`shared/${relative} not found above ${new URL('./', import.meta.url).pathname}; set HERDR_SHARED_DIR`);
}
