import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Poly1305, poly1305 } from '../js/poly1305.js';
import { fromHex, toHex, utf8, concatBytes } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';
import { IETF_CONTRIBUTION, JABBERWOCKY } from '../test-support/rfc8439-texts.js';

test('RFC 8439 2.5.2: "Cryptographic Forum Research Group"', () => {
  const key = fromHex('85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b');
  assert.equal(toHex(poly1305(key, utf8('Cryptographic Forum Research Group'))), 'a8061dc1305136c6c22b8baf0c0127a9');
});

test('RFC 8439 A.3: vectors 1–11 (the reduction edge cases included)', () => {
  const vectors = [
    ['0000000000000000000000000000000000000000000000000000000000000000', '00'.repeat(64), '00000000000000000000000000000000'],
    ['0000000000000000000000000000000036e5f6b5c5e06070f0efca96227a863e', toHex(utf8(IETF_CONTRIBUTION)),
      '36e5f6b5c5e06070f0efca96227a863e'],
    ['36e5f6b5c5e06070f0efca96227a863e00000000000000000000000000000000', toHex(utf8(IETF_CONTRIBUTION)),
      'f3477e7cd95417af89a6b8794c310cf0'],
    ['1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0', toHex(utf8(JABBERWOCKY)),
      '4541669a7eaaee61e708dc7cbcc5eb62'],
    ['0200000000000000000000000000000000000000000000000000000000000000', 'ffffffffffffffffffffffffffffffff',
      '03000000000000000000000000000000'],
    ['02000000000000000000000000000000ffffffffffffffffffffffffffffffff', '02000000000000000000000000000000',
      '03000000000000000000000000000000'],
    ['0100000000000000000000000000000000000000000000000000000000000000',
      'fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffffff11000000000000000000000000000000',
      '05000000000000000000000000000000'],
    ['0100000000000000000000000000000000000000000000000000000000000000',
      'fffffffffffffffffffffffffffffffffbfefefefefefefefefefefefefefefe01010101010101010101010101010101',
      '00000000000000000000000000000000'],
    ['0200000000000000000000000000000000000000000000000000000000000000', 'fdffffffffffffffffffffffffffffff',
      'faffffffffffffffffffffffffffffff'],
    ['0100000000000000040000000000000000000000000000000000000000000000',
      'e33594d7505e43b900000000000000003394d7505e4379cd01000000000000000000000000000000000000000000000001000000000000000000000000000000',
      '14000000000000005500000000000000'],
    ['0100000000000000040000000000000000000000000000000000000000000000',
      'e33594d7505e43b900000000000000003394d7505e4379cd010000000000000000000000000000000000000000000000',
      '13000000000000000000000000000000'],
  ];
  vectors.forEach(([key, message, tag], index) => {
    assert.equal(toHex(poly1305(fromHex(key), fromHex(message))), tag, `vector ${index + 1}`);
  });
});

/**
 * Poly1305 straight from RFC 8439 section 2.5.1 with BigInt: an independent reference.
 * @param {Uint8Array} key @param {Uint8Array} message @returns {Uint8Array}
 */
function referencePoly1305(key, message) {
  /** @param {Uint8Array} bytes */
  const le = (bytes) => bytes.reduceRight((value, byte) => (value << 8n) | BigInt(byte), 0n);
  const p = (1n << 130n) - 5n;
  const r = le(key.subarray(0, 16)) & 0x0ffffffc0ffffffc0ffffffc0fffffffn;
  const s = le(key.subarray(16, 32));
  let accumulator = 0n;
  for (let i = 0; i < message.length; i += 16) {
    const block = message.subarray(i, i + 16);
    const n = le(block) | (1n << BigInt(8 * block.length));
    accumulator = ((accumulator + n) * r) % p;
  }
  let tag = (accumulator + s) & ((1n << 128n) - 1n);
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++, tag >>= 8n) out[i] = Number(tag & 0xffn);
  return out;
}

test('differential: equal to a BigInt reference on 500 random cases (fixed seed), extreme keys included', () => {
  const random = seededRandom(1305);
  for (let i = 0; i < 500; i++) {
    const key = random.bytes(32);
    if (i % 5 === 1) key.fill(0xff, 0, 16); // the largest r after clamping
    if (i % 5 === 2) key.fill(0xff, 16); // s near 2^128
    const message = random.bytes(random.below(600));
    if (i % 7 === 3) message.fill(0xff);
    assert.equal(toHex(poly1305(key, message)), toHex(referencePoly1305(key, message)), `case ${i}`);
  }
});

test('incremental updates equal one call at every split, across block boundaries', () => {
  const random = seededRandom(7);
  const key = random.bytes(32);
  const message = random.bytes(100);
  const whole = toHex(poly1305(key, message));
  for (let first = 0; first <= message.length; first++) {
    for (const second of [first, Math.min(first + 1, message.length), Math.min(first + 17, message.length)]) {
      const tag = new Poly1305(key)
        .update(message.subarray(0, first)).update(message.subarray(first, second)).update(message.subarray(second))
        .finish();
      assert.equal(toHex(tag), whole, `split at ${first}, ${second}`);
    }
  }
});

test('padToBlock adds zeros up to a multiple of 16 bytes, and nothing at a boundary', () => {
  const key = seededRandom(9).bytes(32);
  for (const length of [0, 1, 15, 16, 17, 31, 32]) {
    const message = seededRandom(length).bytes(length);
    const padded = concatBytes(message, new Uint8Array((16 - (length % 16)) % 16));
    assert.equal(toHex(new Poly1305(key).update(message).padToBlock().finish()), toHex(poly1305(key, padded)));
  }
});

test('boundaries: key length, use after finish', () => {
  assert.throws(() => new Poly1305(new Uint8Array(31)), RangeError);
  assert.throws(() => new Poly1305(new Uint8Array(33)), RangeError);
  const mac = new Poly1305(new Uint8Array(32));
  mac.finish();
  assert.throws(() => mac.finish(), /twice/);
  assert.throws(() => mac.update(new Uint8Array(1)), /after finish/);
});
