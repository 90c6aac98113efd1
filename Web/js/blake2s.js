// BLAKE2s of RFC 7693: a hash of 1 to 32 bytes, optionally keyed (a MAC with a key of up to 32
// bytes). Noise uses BLAKE2s-256 unkeyed as HASH, with HASHLEN 32 and BLOCKLEN 64 (Noise
// section 12.4); HMAC over it is in hmac.js.

/** BLOCKLEN: bytes per compression (RFC 7693 section 2.1). */
export const BLOCK_LENGTH = 64;
/** The largest (and Noise's) digest length. */
export const MAX_OUTPUT_LENGTH = 32;
/** The largest key. */
export const MAX_KEY_LENGTH = 32;

/** The initialization vector, the same as SHA-256's (RFC 7693 section 2.6). */
const IV = Uint32Array.of(
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19);

/** The message word schedule SIGMA (RFC 7693 section 2.7), ten rounds of 16 indices. */
const SIGMA = Uint8Array.of(
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
  14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3,
  11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4,
  7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8,
  9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13,
  2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9,
  12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11,
  13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10,
  6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5,
  10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0);

/**
 * The mixing function G (RFC 7693 section 3.1) with BLAKE2s's rotations 16, 12, 8, 7.
 * @param {Uint32Array} v the working vector
 * @param {number} a @param {number} b @param {number} c @param {number} d indices into v
 * @param {number} x @param {number} y the two message words
 */
function mix(v, a, b, c, d, x, y) {
  let va = v[a], vb = v[b], vc = v[c], vd = v[d];
  va = (va + vb + x) | 0; vd ^= va; vd = (vd >>> 16) | (vd << 16);
  vc = (vc + vd) | 0; vb ^= vc; vb = (vb >>> 12) | (vb << 20);
  va = (va + vb + y) | 0; vd ^= va; vd = (vd >>> 8) | (vd << 24);
  vc = (vc + vd) | 0; vb ^= vc; vb = (vb >>> 7) | (vb << 25);
  v[a] = va; v[b] = vb; v[c] = vc; v[d] = vd;
}

/** Incremental BLAKE2s: `update` any number of times, then `digest` once. */
export class Blake2s {
  /** The chained state h[0..7]. */
  #h = new Uint32Array(8);
  /** The working vector v[0..15] and the message words m[0..15], reused by every compression. */
  #v = new Uint32Array(16);
  #m = new Uint32Array(16);
  /** The input not yet compressed: always kept, even when full, until more arrives (the last
   * block must be compressed with the final flag). */
  #buffer = new Uint8Array(BLOCK_LENGTH);
  #buffered = 0;
  /** t: bytes compressed so far (kept as a number: exact far past any input's length). */
  #counter = 0;
  #outputLength;
  #finished = false;

  /**
   * @param {number} [outputLength] nn, 1 to 32 bytes (default 32)
   * @param {Uint8Array} [key] kk, 0 to 32 bytes (default none)
   */
  constructor(outputLength = MAX_OUTPUT_LENGTH, key = new Uint8Array(0)) {
    if (!Number.isInteger(outputLength) || outputLength < 1 || outputLength > MAX_OUTPUT_LENGTH) {
      throw new RangeError(`BLAKE2s: the output is 1 to 32 bytes, got ${outputLength}`);
    }
    if (key.length > MAX_KEY_LENGTH) {
      throw new RangeError(`BLAKE2s: the key is at most 32 bytes, got ${key.length}`);
    }
    this.#outputLength = outputLength;
    this.#h.set(IV);
    // The parameter block's first word: 0x0101kknn (fanout 1, depth 1, key and output lengths).
    this.#h[0] ^= 0x01010000 ^ (key.length << 8) ^ outputLength;
    if (key.length > 0) {
      // A key is the first block, zero-padded (section 3.3).
      this.#buffer.set(key);
      this.#buffered = BLOCK_LENGTH;
    }
  }

  /**
   * Adds input.
   * @param {Uint8Array} data
   * @returns {this}
   */
  update(data) {
    if (this.#finished) throw new Error('BLAKE2s: update after digest');
    let offset = 0;
    while (offset < data.length) {
      if (this.#buffered === BLOCK_LENGTH) {
        this.#counter += BLOCK_LENGTH;
        this.#compress(this.#buffer, 0, false);
        this.#buffered = 0;
      }
      // Whole blocks straight from `data`, as long as more input follows them.
      while (this.#buffered === 0 && data.length - offset > BLOCK_LENGTH) {
        this.#counter += BLOCK_LENGTH;
        this.#compress(data, offset, false);
        offset += BLOCK_LENGTH;
      }
      const take = Math.min(BLOCK_LENGTH - this.#buffered, data.length - offset);
      this.#buffer.set(data.subarray(offset, offset + take), this.#buffered);
      this.#buffered += take;
      offset += take;
    }
    return this;
  }

  /**
   * The digest of everything added. The object is spent afterwards.
   * @returns {Uint8Array} `outputLength` bytes
   */
  digest() {
    if (this.#finished) throw new Error('BLAKE2s: digest called twice');
    this.#finished = true;
    this.#counter += this.#buffered;
    this.#buffer.fill(0, this.#buffered);
    this.#compress(this.#buffer, 0, true);
    const out = new Uint8Array(this.#outputLength);
    for (let i = 0; i < this.#outputLength; i++) out[i] = this.#h[i >>> 2] >>> (8 * (i & 3));
    this.#h.fill(0);
    this.#v.fill(0);
    this.#m.fill(0);
    this.#buffer.fill(0);
    return out;
  }

  /**
   * The compression function F (RFC 7693 section 3.2) over the 64 bytes at `offset`.
   * @param {Uint8Array} bytes
   * @param {number} offset
   * @param {boolean} last the final block flag f
   */
  #compress(bytes, offset, last) {
    const h = this.#h, v = this.#v, m = this.#m;
    for (let i = 0; i < 16; i++) {
      const o = offset + 4 * i;
      m[i] = bytes[o] | (bytes[o + 1] << 8) | (bytes[o + 2] << 16) | (bytes[o + 3] << 24);
    }
    for (let i = 0; i < 8; i++) {
      v[i] = h[i];
      v[i + 8] = IV[i];
    }
    v[12] ^= this.#counter; // t mod 2^32 (Uint32Array storage wraps)
    v[13] ^= Math.floor(this.#counter / 2 ** 32); // t >> 32
    if (last) v[14] = ~v[14];
    for (let round = 0; round < 10; round++) {
      const s = 16 * round;
      mix(v, 0, 4, 8, 12, m[SIGMA[s]], m[SIGMA[s + 1]]);
      mix(v, 1, 5, 9, 13, m[SIGMA[s + 2]], m[SIGMA[s + 3]]);
      mix(v, 2, 6, 10, 14, m[SIGMA[s + 4]], m[SIGMA[s + 5]]);
      mix(v, 3, 7, 11, 15, m[SIGMA[s + 6]], m[SIGMA[s + 7]]);
      mix(v, 0, 5, 10, 15, m[SIGMA[s + 8]], m[SIGMA[s + 9]]);
      mix(v, 1, 6, 11, 12, m[SIGMA[s + 10]], m[SIGMA[s + 11]]);
      mix(v, 2, 7, 8, 13, m[SIGMA[s + 12]], m[SIGMA[s + 13]]);
      mix(v, 3, 4, 9, 14, m[SIGMA[s + 14]], m[SIGMA[s + 15]]);
    }
    for (let i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
  }
}

/**
 * BLAKE2s of `data` in one call.
 * @param {Uint8Array} data
 * @param {{outputLength?: number, key?: Uint8Array}} [options] output 1–32 bytes (default 32), key 0–32 bytes
 * @returns {Uint8Array}
 */
export function blake2s(data, options = {}) {
  return new Blake2s(options.outputLength, options.key).update(data).digest();
}

/**
 * @typedef {object} HashFunction a hash as HMAC and Noise see it
 * @property {string} name the name in Noise protocol names
 * @property {number} hashLength HASHLEN, the digest's length
 * @property {number} blockLength BLOCKLEN, the compression's input block
 * @property {() => {update(data: Uint8Array): unknown, digest(): Uint8Array}} create a new incremental hash
 */

/** BLAKE2s-256 as a hash function for HMAC and Noise (HASHLEN 32, BLOCKLEN 64). */
export const BLAKE2S_256 = Object.freeze(/** @type {HashFunction} */ ({
  name: 'BLAKE2s',
  hashLength: 32,
  blockLength: BLOCK_LENGTH,
  create: () => new Blake2s(32),
}));
