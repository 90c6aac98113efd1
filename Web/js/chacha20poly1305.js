// The AEAD_CHACHA20_POLY1305 construction of RFC 8439 section 2.8: ChaCha20 encrypts, Poly1305
// authenticates the additional data and the ciphertext under a one-time key from ChaCha20's
// block 0.

import { chacha20, chacha20Block } from './chacha20.js';
import { Poly1305 } from './poly1305.js';
import { constantTimeEqual } from './bytes.js';

/** The length of the authentication tag appended to every ciphertext. */
export const TAG_LENGTH = 16;
/** Key and nonce lengths (RFC 8439 section 2.8). */
export const KEY_LENGTH = 32;
export const NONCE_LENGTH = 12;

const EMPTY = new Uint8Array(0);

/**
 * The Poly1305 tag over aad ‖ pad16 ‖ ciphertext ‖ pad16 ‖ le64(|aad|) ‖ le64(|ciphertext|)
 * with the one-time key of section 2.6.
 * @param {Uint8Array} key
 * @param {Uint8Array} nonce
 * @param {Uint8Array} aad
 * @param {Uint8Array} ciphertext
 * @returns {Uint8Array}
 */
function tagFor(key, nonce, aad, ciphertext) {
  const oneTimeKey = chacha20Block(key, 0, nonce).subarray(0, 32);
  const lengths = new Uint8Array(16);
  const view = new DataView(lengths.buffer);
  view.setUint32(0, aad.length, true);
  view.setUint32(4, Math.floor(aad.length / 2 ** 32), true);
  view.setUint32(8, ciphertext.length, true);
  view.setUint32(12, Math.floor(ciphertext.length / 2 ** 32), true);
  const mac = new Poly1305(oneTimeKey);
  oneTimeKey.fill(0);
  return mac.update(aad).padToBlock().update(ciphertext).padToBlock().update(lengths).finish();
}

/**
 * AEAD encryption: the ciphertext of `plaintext` followed by the 16-byte tag.
 * @param {Uint8Array} key 32 bytes
 * @param {Uint8Array} nonce 12 bytes; never use one (key, nonce) pair twice
 * @param {Uint8Array} plaintext
 * @param {Uint8Array} [aad] additional data, authenticated but not encrypted
 * @returns {Uint8Array} `plaintext.length + 16` bytes
 */
export function seal(key, nonce, plaintext, aad = EMPTY) {
  const sealed = new Uint8Array(plaintext.length + TAG_LENGTH);
  const ciphertext = sealed.subarray(0, plaintext.length);
  chacha20(key, 1, nonce, plaintext, ciphertext);
  sealed.set(tagFor(key, nonce, aad, ciphertext), plaintext.length);
  return sealed;
}

/**
 * AEAD decryption: the plaintext, or null when the tag does not authenticate `sealed` and
 * `aad` under this key and nonce (tampered, truncated, or the wrong key, nonce or data), or
 * when `sealed` is shorter than a tag. The tag is checked (in constant time) before anything is
 * decrypted. Wrong key or nonce lengths throw a `RangeError`.
 * @param {Uint8Array} key 32 bytes
 * @param {Uint8Array} nonce 12 bytes
 * @param {Uint8Array} sealed ciphertext ‖ tag
 * @param {Uint8Array} [aad]
 * @returns {Uint8Array | null}
 */
export function open(key, nonce, sealed, aad = EMPTY) {
  if (sealed.length < TAG_LENGTH) {
    // Still validate key and nonce, so misuse throws the same way for every input.
    chacha20Block(key, 0, nonce);
    return null;
  }
  const ciphertext = sealed.subarray(0, sealed.length - TAG_LENGTH);
  const expected = tagFor(key, nonce, aad, ciphertext);
  if (!constantTimeEqual(expected, sealed.subarray(sealed.length - TAG_LENGTH))) return null;
  return chacha20(key, 1, nonce, ciphertext);
}
