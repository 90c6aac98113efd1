// HKDF (RFC 5869) with the SHA-256 test cases of its appendix A and differential runs against
// Node's hkdfSync.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import { hkdf, hkdfSha256 } from '../js/hkdf.js';
import { SHA_256 } from '../js/sha256.js';
import { toHex } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';

/** @param {number} from @param {number} to */
const range = (from, to) => Uint8Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('RFC 5869 A.1: basic test case with SHA-256', () => {
  const okm = hkdf(SHA_256, {
    inputKeyMaterial: new Uint8Array(22).fill(0x0b), salt: range(0x00, 0x0c), info: range(0xf0, 0xf9), length: 42,
  });
  assert.equal(toHex(okm), '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865');
});

test('RFC 5869 A.2: longer inputs and outputs', () => {
  const okm = hkdf(SHA_256, {
    inputKeyMaterial: range(0x00, 0x4f), salt: range(0x60, 0xaf), info: range(0xb0, 0xff), length: 82,
  });
  assert.equal(toHex(okm),
    'b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09' +
    'da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87');
});

test('RFC 5869 A.3: zero-length salt and info', () => {
  const okm = hkdf(SHA_256, { inputKeyMaterial: new Uint8Array(22).fill(0x0b), length: 42 });
  assert.equal(toHex(okm), '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8');
  assert.equal(toHex(hkdfSha256(new Uint8Array(22).fill(0x0b), new Uint8Array(0), 42)), toHex(okm));
});

test("differential: hkdfSha256 equals Node's hkdfSync with an empty salt, lengths to 255 × 32", () => {
  const random = seededRandom(5869);
  for (const length of [0, 1, 8, 31, 32, 33, 64, 100, 255 * 32]) {
    const ikm = random.bytes(random.below(80));
    const info = random.bytes(random.below(40));
    assert.equal(toHex(hkdfSha256(ikm, info, length)),
      toHex(new Uint8Array(nodeCrypto.hkdfSync('sha256', ikm, new Uint8Array(0), info, length))), `length ${length}`);
  }
  assert.throws(() => hkdfSha256(new Uint8Array(1), new Uint8Array(0), 255 * 32 + 1), RangeError);
});
