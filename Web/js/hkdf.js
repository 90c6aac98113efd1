// HKDF of RFC 5869 over any hash (a `HashFunction`, blake2s.js), with HMAC (hmac.js): the
// relay protocol's HKDF-SHA256 (interop-facts §5) derives the join key's Ed25519 seed from the
// room secret and the 6-digit code from a handshake hash, both with an empty salt. (Noise's own
// HKDF, with its chaining key, is noise.js's `hkdf`.)

import { hmac } from './hmac.js';
import { SHA_256 } from './sha256.js';

/** @typedef {import('./blake2s.js').HashFunction} HashFunction */

/**
 * HKDF-Extract then HKDF-Expand (RFC 5869 section 2).
 * @param {HashFunction} hash
 * @param {{inputKeyMaterial: Uint8Array, salt?: Uint8Array, info?: Uint8Array, length: number}} parameters
 *   an empty or absent salt is HashLen zero bytes; `length` at most 255 × HashLen
 * @returns {Uint8Array}
 */
export function hkdf(hash, parameters) {
  const { inputKeyMaterial, length } = parameters;
  const salt = parameters.salt ?? new Uint8Array(0);
  const info = parameters.info ?? new Uint8Array(0);
  if (!Number.isInteger(length) || length < 0 || length > 255 * hash.hashLength) {
    throw new RangeError(`HKDF: a length of ${length} (at most 255 × ${hash.hashLength})`);
  }
  const pseudorandomKey = hmac(hash, salt.length === 0 ? new Uint8Array(hash.hashLength) : salt, inputKeyMaterial);
  const out = new Uint8Array(length);
  let previous = new Uint8Array(0);
  for (let index = 1, offset = 0; offset < length; index++) {
    previous = hmac(hash, pseudorandomKey, previous, info, Uint8Array.of(index));
    out.set(previous.subarray(0, Math.min(previous.length, length - offset)), offset);
    offset += previous.length;
  }
  pseudorandomKey.fill(0);
  previous.fill(0);
  return out;
}

/**
 * HKDF-SHA256 with an empty salt, as the relay protocol uses it.
 * @param {Uint8Array} inputKeyMaterial
 * @param {Uint8Array} info
 * @param {number} length
 * @returns {Uint8Array}
 */
export function hkdfSha256(inputKeyMaterial, info, length) {
  return hkdf(SHA_256, { inputKeyMaterial, info, length });
}
