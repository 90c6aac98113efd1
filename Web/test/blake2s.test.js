import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import { Blake2s, blake2s, BLAKE2S_256 } from '../js/blake2s.js';
import { toHex, utf8 } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';

test('RFC 7693 appendix B: BLAKE2s-256("abc")', () => {
  assert.equal(toHex(blake2s(utf8('abc'))), '508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982');
});

test('BLAKE2s-256 of the empty input', () => {
  assert.equal(toHex(blake2s(new Uint8Array(0))), '69217a3079908094e11121d042354a7c1f55b6482ca1a51e1b250dfd1ed0eef9');
});

/**
 * RFC 7693 appendix E's deterministic sequence (a Fibonacci generator).
 * @param {number} length @param {number} seed @returns {Uint8Array}
 */
function selftestSequence(length, seed) {
  const out = new Uint8Array(length);
  let a = Math.imul(0xdead4bad, seed) >>> 0;
  let b = 1;
  for (let i = 0; i < length; i++) {
    const t = (a + b) >>> 0;
    a = b;
    b = t;
    out[i] = t >>> 24;
  }
  return out;
}

test('RFC 7693 appendix E: the self-test grand hash (unkeyed and keyed, 4 output and 6 input lengths)', () => {
  const grand = new Blake2s(32);
  for (const outputLength of [16, 20, 28, 32]) {
    for (const inputLength of [0, 3, 64, 65, 255, 1024]) {
      const input = selftestSequence(inputLength, inputLength);
      grand.update(blake2s(input, { outputLength }));
      const key = selftestSequence(outputLength, outputLength);
      grand.update(blake2s(input, { outputLength, key }));
    }
  }
  assert.equal(toHex(grand.digest()), '6a411f08ce25adcdfb02aba641451cec53c598b24f4fc787fbdc88797f4c1dfe');
});

test("differential: equal to Node's blake2s256 on 600 random lengths 0–2000 (fixed seed)", () => {
  const random = seededRandom(7693);
  for (let i = 0; i < 600; i++) {
    // Every length up to 200 once, then random ones.
    const length = i <= 200 ? i : random.below(2001);
    const data = random.bytes(length);
    assert.equal(toHex(blake2s(data)), toHex(nodeCrypto.createHash('blake2s256').update(data).digest()), `${length} bytes`);
  }
});

test('incremental updates equal one call at every split, block boundaries included', () => {
  const data = seededRandom(3).bytes(200);
  const whole = toHex(blake2s(data));
  for (let first = 0; first <= data.length; first++) {
    for (const second of [first, Math.min(first + 64, data.length), data.length]) {
      const hash = new Blake2s().update(data.subarray(0, first)).update(data.subarray(first, second))
        .update(data.subarray(second)).digest();
      assert.equal(toHex(hash), whole, `split at ${first}, ${second}`);
    }
  }
  // One byte at a time.
  const bytewise = new Blake2s();
  for (const byte of data) bytewise.update(Uint8Array.of(byte));
  assert.equal(toHex(bytewise.digest()), whole);
});

test('a keyed hash with an empty message still compresses the key block', () => {
  const key = seededRandom(4).bytes(32);
  assert.notEqual(toHex(blake2s(new Uint8Array(0), { key })), toHex(blake2s(new Uint8Array(0))));
  // The key block is final only when no message follows: key then 0 bytes vs key then 64 zero bytes differ.
  assert.notEqual(toHex(blake2s(new Uint8Array(0), { key })), toHex(blake2s(new Uint8Array(64), { key })));
});

test('boundaries: output length 1–32, key length 0–32, use after digest', () => {
  for (const outputLength of [1, 32]) assert.equal(blake2s(new Uint8Array(3), { outputLength }).length, outputLength);
  for (const outputLength of [0, 33, 1.5, -1]) {
    assert.throws(() => blake2s(new Uint8Array(0), { outputLength }), RangeError, String(outputLength));
  }
  assert.equal(blake2s(new Uint8Array(0), { key: new Uint8Array(32) }).length, 32);
  assert.throws(() => blake2s(new Uint8Array(0), { key: new Uint8Array(33) }), RangeError);
  const hash = new Blake2s();
  hash.digest();
  assert.throws(() => hash.digest(), /twice/);
  assert.throws(() => hash.update(new Uint8Array(1)), /after digest/);
});

test('BLAKE2S_256 describes BLAKE2s for HMAC and Noise', () => {
  assert.equal(BLAKE2S_256.name, 'BLAKE2s');
  assert.equal(BLAKE2S_256.hashLength, 32);
  assert.equal(BLAKE2S_256.blockLength, 64);
  const hash = BLAKE2S_256.create();
  hash.update(utf8('abc'));
  assert.equal(toHex(hash.digest()), '508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982');
});
