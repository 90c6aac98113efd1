// Poly1305 of RFC 8439 section 2.5: a one-time authenticator with a 32-byte key (r ‖ s).
//
// Arithmetic modulo p = 2^130 − 5 runs on ten limbs of 13 bits each (limb i holds bits 13i to
// 13i + 12). JavaScript numbers are exact integers up to 2^53: a product of two limbs is below
// 2^30 and a sum of ten such products below 2^34, so the schoolbook multiplication needs no
// intermediate carries. 2^130 ≡ 5 (mod p), so a product's part at or above 2^130 folds back
// multiplied by 5. No branch and no memory index depends on the key or the message.

/** @param {Uint8Array} bytes @param {number} offset @returns {number} the little-endian 16-bit word */
function word16(bytes, offset) {
  return bytes[offset] | (bytes[offset + 1] << 8);
}

/** An incremental Poly1305 computation under one key: `update` any number of times, then `finish`. */
export class Poly1305 {
  /** r, clamped, as 13-bit limbs. */
  #r = new Float64Array(10);
  /** The accumulator h as 13-bit limbs (each may briefly exceed 13 bits between blocks). */
  #h = new Float64Array(10);
  /** s, the second half of the key, as eight 16-bit words. */
  #s = new Uint16Array(8);
  /** Bytes of a block not yet full. */
  #buffer = new Uint8Array(16);
  #buffered = 0;
  #finished = false;

  /** @param {Uint8Array} key 32 bytes: r ‖ s; never use one key for two messages */
  constructor(key) {
    if (!(key instanceof Uint8Array) || key.length !== 32) {
      throw new RangeError(`Poly1305: the key is 32 bytes, got ${key instanceof Uint8Array ? key.length : typeof key}`);
    }
    // r &= 0x0ffffffc0ffffffc0ffffffc0fffffff (section 2.5.1): the top four bits of bytes 3, 7,
    // 11 and 15 and the bottom two bits of bytes 4, 8 and 12 are cleared.
    const clamped = key.slice(0, 16);
    clamped[3] &= 15; clamped[7] &= 15; clamped[11] &= 15; clamped[15] &= 15;
    clamped[4] &= 252; clamped[8] &= 252; clamped[12] &= 252;
    const t0 = word16(clamped, 0), t1 = word16(clamped, 2), t2 = word16(clamped, 4), t3 = word16(clamped, 6);
    const t4 = word16(clamped, 8), t5 = word16(clamped, 10), t6 = word16(clamped, 12), t7 = word16(clamped, 14);
    const r = this.#r;
    r[0] = t0 & 0x1fff;
    r[1] = ((t0 >>> 13) | (t1 << 3)) & 0x1fff;
    r[2] = ((t1 >>> 10) | (t2 << 6)) & 0x1fff;
    r[3] = ((t2 >>> 7) | (t3 << 9)) & 0x1fff;
    r[4] = ((t3 >>> 4) | (t4 << 12)) & 0x1fff;
    r[5] = (t4 >>> 1) & 0x1fff;
    r[6] = ((t4 >>> 14) | (t5 << 2)) & 0x1fff;
    r[7] = ((t5 >>> 11) | (t6 << 5)) & 0x1fff;
    r[8] = ((t6 >>> 8) | (t7 << 8)) & 0x1fff;
    r[9] = t7 >>> 5;
    for (let i = 0; i < 8; i++) this.#s[i] = word16(key, 16 + 2 * i);
  }

  /**
   * Adds message bytes.
   * @param {Uint8Array} data
   * @returns {this}
   */
  update(data) {
    if (this.#finished) throw new Error('Poly1305: update after finish');
    let offset = 0;
    if (this.#buffered > 0) {
      const take = Math.min(16 - this.#buffered, data.length);
      this.#buffer.set(data.subarray(0, take), this.#buffered);
      this.#buffered += take;
      offset = take;
      if (this.#buffered < 16) return this;
      this.#blocks(this.#buffer, 0, 16, 1);
      this.#buffered = 0;
    }
    const whole = data.length - ((data.length - offset) % 16);
    if (whole > offset) this.#blocks(data, offset, whole, 1);
    if (whole < data.length) {
      this.#buffer.set(data.subarray(whole), 0);
      this.#buffered = data.length - whole;
    }
    return this;
  }

  /**
   * Adds zero bytes up to the next multiple of 16 bytes of message so far (the AEAD's padding,
   * RFC 8439 section 2.8), without materializing them.
   * @returns {this}
   */
  padToBlock() {
    if (this.#buffered > 0) this.update(new Uint8Array(16 - this.#buffered));
    return this;
  }

  /**
   * The 16-byte tag. The object is spent afterwards.
   * @returns {Uint8Array}
   */
  finish() {
    if (this.#finished) throw new Error('Poly1305: finish called twice');
    this.#finished = true;
    if (this.#buffered > 0) {
      // The last, partial block: its bytes, then a 1 byte, then zeros; no 2^128 bit.
      const last = new Uint8Array(16);
      last.set(this.#buffer.subarray(0, this.#buffered));
      last[this.#buffered] = 1;
      this.#blocks(last, 0, 16, 0);
    }
    const h = this.#h;
    // Carry every limb down to 13 bits, twice round (the second pass settles the fold of the first).
    for (let pass = 0; pass < 2; pass++) {
      let carry = 0;
      for (let i = 0; i < 10; i++) {
        const value = h[i] + carry;
        h[i] = value & 0x1fff;
        carry = (value - h[i]) / 0x2000;
      }
      h[0] += carry * 5;
    }
    // Now h < 2^130 + small; one more carry of limb 0 into limb 1.
    let carry = Math.floor(h[0] / 0x2000);
    h[0] -= carry * 0x2000;
    h[1] += carry;
    // g = h + 5 − 2^130. If computing h + 5 carries out of bit 130, h ≥ p and h mod p = g.
    const g = new Float64Array(10);
    carry = 5;
    for (let i = 0; i < 10; i++) {
      const value = h[i] + carry;
      g[i] = value & 0x1fff;
      carry = value >>> 13;
    }
    // carry is 0 or 1 here; select without a branch.
    const useG = -carry; // all ones or all zeros
    for (let i = 0; i < 10; i++) h[i] = (h[i] & ~useG) | (g[i] & useG);
    // h mod 2^128 as eight 16-bit words, then + s mod 2^128.
    const words = [
      h[0] | (h[1] << 13),
      (h[1] >>> 3) | (h[2] << 10),
      (h[2] >>> 6) | (h[3] << 7),
      (h[3] >>> 9) | (h[4] << 4),
      (h[4] >>> 12) | (h[5] << 1) | (h[6] << 14),
      (h[6] >>> 2) | (h[7] << 11),
      (h[7] >>> 5) | (h[8] << 8),
      (h[8] >>> 8) | (h[9] << 5),
    ];
    const tag = new Uint8Array(16);
    carry = 0;
    for (let i = 0; i < 8; i++) {
      const sum = (words[i] & 0xffff) + this.#s[i] + carry;
      tag[2 * i] = sum;
      tag[2 * i + 1] = sum >>> 8;
      carry = sum >>> 16;
    }
    h.fill(0);
    this.#r.fill(0);
    this.#s.fill(0);
    this.#buffer.fill(0);
    return tag;
  }

  /**
   * h = (h + block + hibit · 2^128) · r mod p for each 16-byte block of data[start, end).
   * @param {Uint8Array} data
   * @param {number} start
   * @param {number} end start plus a multiple of 16
   * @param {number} hibit 1 for a full block, 0 for the padded last block
   */
  #blocks(data, start, end, hibit) {
    const r = this.#r, h = this.#h;
    const r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3], r4 = r[4], r5 = r[5], r6 = r[6], r7 = r[7], r8 = r[8], r9 = r[9];
    // 5·r_i: the factor of the part of a product that lands at or above 2^130.
    const f1 = 5 * r1, f2 = 5 * r2, f3 = 5 * r3, f4 = 5 * r4, f5 = 5 * r5, f6 = 5 * r6, f7 = 5 * r7, f8 = 5 * r8,
      f9 = 5 * r9;
    const top = hibit << 11; // 2^128 is bit 11 of limb 9
    let h0 = h[0], h1 = h[1], h2 = h[2], h3 = h[3], h4 = h[4], h5 = h[5], h6 = h[6], h7 = h[7], h8 = h[8], h9 = h[9];
    for (let o = start; o < end; o += 16) {
      const t0 = word16(data, o), t1 = word16(data, o + 2), t2 = word16(data, o + 4), t3 = word16(data, o + 6);
      const t4 = word16(data, o + 8), t5 = word16(data, o + 10), t6 = word16(data, o + 12), t7 = word16(data, o + 14);
      h0 += t0 & 0x1fff;
      h1 += ((t0 >>> 13) | (t1 << 3)) & 0x1fff;
      h2 += ((t1 >>> 10) | (t2 << 6)) & 0x1fff;
      h3 += ((t2 >>> 7) | (t3 << 9)) & 0x1fff;
      h4 += ((t3 >>> 4) | (t4 << 12)) & 0x1fff;
      h5 += (t4 >>> 1) & 0x1fff;
      h6 += ((t4 >>> 14) | (t5 << 2)) & 0x1fff;
      h7 += ((t5 >>> 11) | (t6 << 5)) & 0x1fff;
      h8 += ((t6 >>> 8) | (t7 << 8)) & 0x1fff;
      h9 += (t7 >>> 5) | top;

      // d_i = Σ_{j ≤ i} h_j·r_{i−j} + Σ_{j > i} h_j·5·r_{i−j+10}
      let d0 = h0 * r0 + h1 * f9 + h2 * f8 + h3 * f7 + h4 * f6 + h5 * f5 + h6 * f4 + h7 * f3 + h8 * f2 + h9 * f1;
      let d1 = h0 * r1 + h1 * r0 + h2 * f9 + h3 * f8 + h4 * f7 + h5 * f6 + h6 * f5 + h7 * f4 + h8 * f3 + h9 * f2;
      let d2 = h0 * r2 + h1 * r1 + h2 * r0 + h3 * f9 + h4 * f8 + h5 * f7 + h6 * f6 + h7 * f5 + h8 * f4 + h9 * f3;
      let d3 = h0 * r3 + h1 * r2 + h2 * r1 + h3 * r0 + h4 * f9 + h5 * f8 + h6 * f7 + h7 * f6 + h8 * f5 + h9 * f4;
      let d4 = h0 * r4 + h1 * r3 + h2 * r2 + h3 * r1 + h4 * r0 + h5 * f9 + h6 * f8 + h7 * f7 + h8 * f6 + h9 * f5;
      let d5 = h0 * r5 + h1 * r4 + h2 * r3 + h3 * r2 + h4 * r1 + h5 * r0 + h6 * f9 + h7 * f8 + h8 * f7 + h9 * f6;
      let d6 = h0 * r6 + h1 * r5 + h2 * r4 + h3 * r3 + h4 * r2 + h5 * r1 + h6 * r0 + h7 * f9 + h8 * f8 + h9 * f7;
      let d7 = h0 * r7 + h1 * r6 + h2 * r5 + h3 * r4 + h4 * r3 + h5 * r2 + h6 * r1 + h7 * r0 + h8 * f9 + h9 * f8;
      let d8 = h0 * r8 + h1 * r7 + h2 * r6 + h3 * r5 + h4 * r4 + h5 * r3 + h6 * r2 + h7 * r1 + h8 * r0 + h9 * f9;
      let d9 = h0 * r9 + h1 * r8 + h2 * r7 + h3 * r6 + h4 * r5 + h5 * r4 + h6 * r3 + h7 * r2 + h8 * r1 + h9 * r0;

      // Carry each d_i into the next, keeping 13 bits; the carry out of limb 9 is worth
      // 2^130 ≡ 5. (x & 0x1fff keeps the low 13 bits of any integer below 2^53.)
      let c;
      c = Math.floor(d0 / 0x2000); h0 = d0 & 0x1fff; d1 += c;
      c = Math.floor(d1 / 0x2000); h1 = d1 & 0x1fff; d2 += c;
      c = Math.floor(d2 / 0x2000); h2 = d2 & 0x1fff; d3 += c;
      c = Math.floor(d3 / 0x2000); h3 = d3 & 0x1fff; d4 += c;
      c = Math.floor(d4 / 0x2000); h4 = d4 & 0x1fff; d5 += c;
      c = Math.floor(d5 / 0x2000); h5 = d5 & 0x1fff; d6 += c;
      c = Math.floor(d6 / 0x2000); h6 = d6 & 0x1fff; d7 += c;
      c = Math.floor(d7 / 0x2000); h7 = d7 & 0x1fff; d8 += c;
      c = Math.floor(d8 / 0x2000); h8 = d8 & 0x1fff; d9 += c;
      c = Math.floor(d9 / 0x2000); h9 = d9 & 0x1fff;
      h0 += c * 5;
      c = h0 >>> 13; h0 &= 0x1fff; h1 += c;
    }
    h[0] = h0; h[1] = h1; h[2] = h2; h[3] = h3; h[4] = h4; h[5] = h5; h[6] = h6; h[7] = h7; h[8] = h8; h[9] = h9;
  }
}

/**
 * The Poly1305 tag of `message` under a one-time `key` (RFC 8439 section 2.5).
 * @param {Uint8Array} key 32 bytes
 * @param {Uint8Array} message
 * @returns {Uint8Array} 16 bytes
 */
export function poly1305(key, message) {
  return new Poly1305(key).update(message).finish();
}
