// ChaCha20 of RFC 8439 sections 2.1–2.4: a 256-bit key, a 96-bit nonce and a 32-bit block
// counter. The AEAD built from it is in chacha20poly1305.js.

/** "expand 32-byte k" as four little-endian words (RFC 8439 section 2.3). */
const SIGMA0 = 0x61707865;
const SIGMA1 = 0x3320646e;
const SIGMA2 = 0x79622d32;
const SIGMA3 = 0x6b206574;

/** The largest block counter: it is a 32-bit word (RFC 8439 section 2.3). */
export const MAX_COUNTER = 0xffffffff;

/**
 * @param {Uint8Array} bytes
 * @param {number} offset
 * @returns {number} the little-endian 32-bit word at `offset`
 */
function readWord(bytes, offset) {
  return (bytes[offset] | (bytes[offset + 1] << 8) | (bytes[offset + 2] << 16) | (bytes[offset + 3] << 24)) >>> 0;
}

/**
 * @param {Uint8Array} key
 * @param {Uint8Array} nonce
 * @returns {Uint32Array} the 16-word input state with the counter word (12) left 0
 */
function initialState(key, nonce) {
  if (!(key instanceof Uint8Array) || key.length !== 32) {
    throw new RangeError(`ChaCha20: the key is 32 bytes, got ${key instanceof Uint8Array ? key.length : typeof key}`);
  }
  if (!(nonce instanceof Uint8Array) || nonce.length !== 12) {
    throw new RangeError(`ChaCha20: the nonce is 12 bytes, got ${nonce instanceof Uint8Array ? nonce.length : typeof nonce}`);
  }
  const state = new Uint32Array(16);
  state[0] = SIGMA0;
  state[1] = SIGMA1;
  state[2] = SIGMA2;
  state[3] = SIGMA3;
  for (let i = 0; i < 8; i++) state[4 + i] = readWord(key, 4 * i);
  for (let i = 0; i < 3; i++) state[13 + i] = readWord(nonce, 4 * i);
  return state;
}

/**
 * The ChaCha20 block function (RFC 8439 section 2.3): 20 rounds (10 column rounds and 10
 * diagonal rounds, alternating) over `input`, plus `input`, into `output` as 16 words.
 * @param {Uint32Array} input 16 words
 * @param {Uint32Array} output 16 words
 */
function block(input, output) {
  let x0 = input[0], x1 = input[1], x2 = input[2], x3 = input[3];
  let x4 = input[4], x5 = input[5], x6 = input[6], x7 = input[7];
  let x8 = input[8], x9 = input[9], x10 = input[10], x11 = input[11];
  let x12 = input[12], x13 = input[13], x14 = input[14], x15 = input[15];
  for (let round = 0; round < 20; round += 2) {
    // The quarter round of section 2.1, written out for speed:
    //   a += b; d ^= a; d <<<= 16;  c += d; b ^= c; b <<<= 12;
    //   a += b; d ^= a; d <<<= 8;   c += d; b ^= c; b <<<= 7;
    // Column round: QUARTERROUND(0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15).
    x0 = (x0 + x4) | 0; x12 ^= x0; x12 = (x12 << 16) | (x12 >>> 16);
    x8 = (x8 + x12) | 0; x4 ^= x8; x4 = (x4 << 12) | (x4 >>> 20);
    x0 = (x0 + x4) | 0; x12 ^= x0; x12 = (x12 << 8) | (x12 >>> 24);
    x8 = (x8 + x12) | 0; x4 ^= x8; x4 = (x4 << 7) | (x4 >>> 25);

    x1 = (x1 + x5) | 0; x13 ^= x1; x13 = (x13 << 16) | (x13 >>> 16);
    x9 = (x9 + x13) | 0; x5 ^= x9; x5 = (x5 << 12) | (x5 >>> 20);
    x1 = (x1 + x5) | 0; x13 ^= x1; x13 = (x13 << 8) | (x13 >>> 24);
    x9 = (x9 + x13) | 0; x5 ^= x9; x5 = (x5 << 7) | (x5 >>> 25);

    x2 = (x2 + x6) | 0; x14 ^= x2; x14 = (x14 << 16) | (x14 >>> 16);
    x10 = (x10 + x14) | 0; x6 ^= x10; x6 = (x6 << 12) | (x6 >>> 20);
    x2 = (x2 + x6) | 0; x14 ^= x2; x14 = (x14 << 8) | (x14 >>> 24);
    x10 = (x10 + x14) | 0; x6 ^= x10; x6 = (x6 << 7) | (x6 >>> 25);

    x3 = (x3 + x7) | 0; x15 ^= x3; x15 = (x15 << 16) | (x15 >>> 16);
    x11 = (x11 + x15) | 0; x7 ^= x11; x7 = (x7 << 12) | (x7 >>> 20);
    x3 = (x3 + x7) | 0; x15 ^= x3; x15 = (x15 << 8) | (x15 >>> 24);
    x11 = (x11 + x15) | 0; x7 ^= x11; x7 = (x7 << 7) | (x7 >>> 25);

    // Diagonal round: QUARTERROUND(0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14).
    x0 = (x0 + x5) | 0; x15 ^= x0; x15 = (x15 << 16) | (x15 >>> 16);
    x10 = (x10 + x15) | 0; x5 ^= x10; x5 = (x5 << 12) | (x5 >>> 20);
    x0 = (x0 + x5) | 0; x15 ^= x0; x15 = (x15 << 8) | (x15 >>> 24);
    x10 = (x10 + x15) | 0; x5 ^= x10; x5 = (x5 << 7) | (x5 >>> 25);

    x1 = (x1 + x6) | 0; x12 ^= x1; x12 = (x12 << 16) | (x12 >>> 16);
    x11 = (x11 + x12) | 0; x6 ^= x11; x6 = (x6 << 12) | (x6 >>> 20);
    x1 = (x1 + x6) | 0; x12 ^= x1; x12 = (x12 << 8) | (x12 >>> 24);
    x11 = (x11 + x12) | 0; x6 ^= x11; x6 = (x6 << 7) | (x6 >>> 25);

    x2 = (x2 + x7) | 0; x13 ^= x2; x13 = (x13 << 16) | (x13 >>> 16);
    x8 = (x8 + x13) | 0; x7 ^= x8; x7 = (x7 << 12) | (x7 >>> 20);
    x2 = (x2 + x7) | 0; x13 ^= x2; x13 = (x13 << 8) | (x13 >>> 24);
    x8 = (x8 + x13) | 0; x7 ^= x8; x7 = (x7 << 7) | (x7 >>> 25);

    x3 = (x3 + x4) | 0; x14 ^= x3; x14 = (x14 << 16) | (x14 >>> 16);
    x9 = (x9 + x14) | 0; x4 ^= x9; x4 = (x4 << 12) | (x4 >>> 20);
    x3 = (x3 + x4) | 0; x14 ^= x3; x14 = (x14 << 8) | (x14 >>> 24);
    x9 = (x9 + x14) | 0; x4 ^= x9; x4 = (x4 << 7) | (x4 >>> 25);
  }
  output[0] = x0 + input[0]; output[1] = x1 + input[1]; output[2] = x2 + input[2]; output[3] = x3 + input[3];
  output[4] = x4 + input[4]; output[5] = x5 + input[5]; output[6] = x6 + input[6]; output[7] = x7 + input[7];
  output[8] = x8 + input[8]; output[9] = x9 + input[9]; output[10] = x10 + input[10]; output[11] = x11 + input[11];
  output[12] = x12 + input[12]; output[13] = x13 + input[13]; output[14] = x14 + input[14]; output[15] = x15 + input[15];
}

/** Whether this platform stores a Uint32Array's words little-endian (every current browser). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Serializes 16 words little-endian into `bytes` (a view of `words`' own buffer when the
 * platform is little-endian, which makes this a no-op).
 * @param {Uint32Array} words
 * @param {Uint8Array} bytes 64 bytes
 */
function serialize(words, bytes) {
  if (LITTLE_ENDIAN) return;
  for (let i = 0; i < 16; i++) {
    const w = words[i];
    bytes[4 * i] = w;
    bytes[4 * i + 1] = w >>> 8;
    bytes[4 * i + 2] = w >>> 16;
    bytes[4 * i + 3] = w >>> 24;
  }
}

/**
 * The ChaCha20 block function (RFC 8439 section 2.3): 64 bytes of key stream for one block.
 * @param {Uint8Array} key 32 bytes
 * @param {number} counter the block counter, 0 to 2^32 − 1
 * @param {Uint8Array} nonce 12 bytes
 * @returns {Uint8Array} 64 bytes
 */
export function chacha20Block(key, counter, nonce) {
  checkCounter(counter, 1);
  const state = initialState(key, nonce);
  state[12] = counter;
  const words = new Uint32Array(16);
  const bytes = LITTLE_ENDIAN ? new Uint8Array(words.buffer) : new Uint8Array(64);
  block(state, words);
  serialize(words, bytes);
  return bytes;
}

/**
 * ChaCha20 encryption (RFC 8439 section 2.4): `input` XOR the key stream from block `counter`
 * on. Decryption is the same operation. Writes into `output` (which may be `input` itself) or a
 * new array.
 * @param {Uint8Array} key 32 bytes
 * @param {number} counter the first block's counter, 0 to 2^32 − 1
 * @param {Uint8Array} nonce 12 bytes
 * @param {Uint8Array} input
 * @param {Uint8Array} [output] at least `input.length` bytes
 * @returns {Uint8Array} `output`, or a new array, holding `input.length` bytes of result
 */
export function chacha20(key, counter, nonce, input, output = new Uint8Array(input.length)) {
  const blocks = Math.ceil(input.length / 64);
  checkCounter(counter, blocks);
  if (output.length < input.length) {
    throw new RangeError(`ChaCha20: output of ${output.length} bytes for ${input.length} bytes of input`);
  }
  const state = initialState(key, nonce);
  const words = new Uint32Array(16);
  const stream = LITTLE_ENDIAN ? new Uint8Array(words.buffer) : new Uint8Array(64);
  let b = 0;
  if (LITTLE_ENDIAN && input.byteOffset % 4 === 0 && output.byteOffset % 4 === 0) {
    // Whole blocks a word at a time when both arrays are word-aligned (the common case).
    const whole = input.length >>> 6;
    const in32 = new Uint32Array(input.buffer, input.byteOffset, whole * 16);
    const out32 = new Uint32Array(output.buffer, output.byteOffset, whole * 16);
    for (; b < whole; b++) {
      state[12] = counter + b;
      block(state, words);
      const offset = 16 * b;
      for (let i = 0; i < 16; i++) out32[offset + i] = in32[offset + i] ^ words[i];
    }
  }
  for (; b < blocks; b++) {
    state[12] = counter + b;
    block(state, words);
    serialize(words, stream);
    const offset = 64 * b;
    const end = Math.min(64, input.length - offset);
    for (let i = 0; i < end; i++) output[offset + i] = input[offset + i] ^ stream[i];
  }
  return output;
}

/**
 * @param {number} counter
 * @param {number} blocks how many blocks from `counter` on are needed
 */
function checkCounter(counter, blocks) {
  if (!Number.isInteger(counter) || counter < 0 || counter > MAX_COUNTER) {
    throw new RangeError(`ChaCha20: the block counter is a 32-bit word, got ${counter}`);
  }
  if (blocks > 0 && counter + blocks - 1 > MAX_COUNTER) {
    throw new RangeError(`ChaCha20: ${blocks} blocks from counter ${counter} pass the 32-bit counter's end`);
  }
}
