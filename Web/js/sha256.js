// SHA-256 of FIPS 180-4 (section 6.2), incremental, in 32-bit words. The relay protocol hashes
// with it (room names, interop-facts §5) and the companion code's derivations use HKDF-SHA256
// (hkdf.js): the join key's seed and the 6-digit code. Synchronous, so that a room name is a
// plain value; WebCrypto's digest is asynchronous.

/** The round constants K (FIPS 180-4 section 4.2.2). */
const K = Uint32Array.of(
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2);

/** The initial hash value H(0) (FIPS 180-4 section 5.3.3). */
const INITIAL = Uint32Array.of(
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19);

/** Bytes per block. */
export const SHA256_BLOCK_LENGTH = 64;
/** Bytes of a digest. */
export const SHA256_LENGTH = 32;

/** Incremental SHA-256: `update` any number of times, then `digest` once. */
export class Sha256 {
  #h = INITIAL.slice();
  #w = new Uint32Array(64);
  #buffer = new Uint8Array(SHA256_BLOCK_LENGTH);
  #buffered = 0;
  /** Bytes hashed so far (exact as a number far past any input here). */
  #length = 0;
  #finished = false;

  /**
   * @param {Uint8Array} data
   * @returns {this}
   */
  update(data) {
    if (this.#finished) throw new Error('SHA-256: update after digest');
    let offset = 0;
    this.#length += data.length;
    if (this.#buffered > 0) {
      const take = Math.min(SHA256_BLOCK_LENGTH - this.#buffered, data.length);
      this.#buffer.set(data.subarray(0, take), this.#buffered);
      this.#buffered += take;
      offset = take;
      if (this.#buffered < SHA256_BLOCK_LENGTH) return this;
      this.#compress(this.#buffer, 0);
      this.#buffered = 0;
    }
    for (; offset + SHA256_BLOCK_LENGTH <= data.length; offset += SHA256_BLOCK_LENGTH) this.#compress(data, offset);
    this.#buffer.set(data.subarray(offset), 0);
    this.#buffered = data.length - offset;
    return this;
  }

  /** @returns {Uint8Array} the 32-byte digest */
  digest() {
    if (this.#finished) throw new Error('SHA-256: digest twice');
    this.#finished = true;
    const bits = this.#length * 8;
    const buffer = this.#buffer;
    buffer[this.#buffered++] = 0x80;
    if (this.#buffered > SHA256_BLOCK_LENGTH - 8) {
      buffer.fill(0, this.#buffered);
      this.#compress(buffer, 0);
      this.#buffered = 0;
    }
    buffer.fill(0, this.#buffered);
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    view.setUint32(SHA256_BLOCK_LENGTH - 8, Math.floor(bits / 0x100000000));
    view.setUint32(SHA256_BLOCK_LENGTH - 4, bits >>> 0);
    this.#compress(buffer, 0);
    const out = new Uint8Array(SHA256_LENGTH);
    const outView = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) outView.setUint32(4 * i, this.#h[i]);
    buffer.fill(0);
    this.#w.fill(0);
    return out;
  }

  /**
   * One block (FIPS 180-4 section 6.2.2).
   * @param {Uint8Array} data
   * @param {number} offset
   */
  #compress(data, offset) {
    const w = this.#w;
    for (let t = 0; t < 16; t++) {
      const i = offset + 4 * t;
      w[t] = (data[i] << 24) | (data[i + 1] << 16) | (data[i + 2] << 8) | data[i + 3];
    }
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15];
      const y = w[t - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
    }
    const h = this.#h;
    let a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (let t = 0; t < 64; t++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const choice = (e & f) ^ (~e & g);
      const t1 = (k + s1 + choice + K[t] + w[t]) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const majority = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (s0 + majority) | 0;
      k = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0;
    h[4] = (h[4] + e) | 0; h[5] = (h[5] + f) | 0; h[6] = (h[6] + g) | 0; h[7] = (h[7] + k) | 0;
  }
}

/**
 * SHA-256 of the parts, one after another.
 * @param {...Uint8Array} parts
 * @returns {Uint8Array}
 */
export function sha256(...parts) {
  const state = new Sha256();
  for (const part of parts) state.update(part);
  return state.digest();
}

/** SHA-256 as a hash function for HMAC and HKDF (HASHLEN 32, BLOCKLEN 64). */
export const SHA_256 = Object.freeze(/** @type {import('./blake2s.js').HashFunction} */ ({
  name: 'SHA256',
  hashLength: SHA256_LENGTH,
  blockLength: SHA256_BLOCK_LENGTH,
  create: () => new Sha256(),
}));
