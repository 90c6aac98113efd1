// HMAC of RFC 2104 over any hash function given as a `HashFunction` (blake2s.js): Noise's
// HMAC-HASH (Noise section 4.3), from which its HKDF is built (noise.js).

/** @typedef {import('./blake2s.js').HashFunction} HashFunction */

const INNER_PAD = 0x36;
const OUTER_PAD = 0x5c;

/**
 * HMAC(key, message) = HASH((K ⊕ opad) ‖ HASH((K ⊕ ipad) ‖ message)), K being the key
 * zero-padded to BLOCKLEN, or its hash when it is longer than BLOCKLEN.
 * @param {HashFunction} hash
 * @param {Uint8Array} key any length
 * @param {...Uint8Array} message the message, in parts that are hashed one after another
 * @returns {Uint8Array} HASHLEN bytes
 */
export function hmac(hash, key, ...message) {
  const block = new Uint8Array(hash.blockLength);
  block.set(key.length > hash.blockLength ? digestOf(hash, key) : key);
  for (let i = 0; i < block.length; i++) block[i] ^= INNER_PAD;
  const inner = hash.create();
  inner.update(block);
  for (const part of message) inner.update(part);
  const innerDigest = inner.digest();
  for (let i = 0; i < block.length; i++) block[i] ^= INNER_PAD ^ OUTER_PAD;
  const outer = hash.create();
  outer.update(block);
  outer.update(innerDigest);
  block.fill(0);
  return outer.digest();
}

/**
 * @param {HashFunction} hash
 * @param {Uint8Array} data
 * @returns {Uint8Array}
 */
function digestOf(hash, data) {
  const h = hash.create();
  h.update(data);
  return h.digest();
}
