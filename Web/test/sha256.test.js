// SHA-256 (FIPS 180-4) with the NIST example vectors, and differential runs against Node's own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import { Sha256, sha256 } from '../js/sha256.js';
import { hmac } from '../js/hmac.js';
import { SHA_256 } from '../js/sha256.js';
import { toHex, utf8 } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';

test('NIST vectors: "", "abc", the 448-bit message, a million "a"', () => {
  assert.equal(toHex(sha256(new Uint8Array(0))), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(toHex(sha256(utf8('abc'))), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(toHex(sha256(utf8('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'))),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  const million = new Sha256();
  const chunk = new Uint8Array(1000).fill(0x61);
  for (let i = 0; i < 1000; i++) million.update(chunk);
  assert.equal(toHex(million.digest()), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
});

test("differential: every length around the block and padding boundaries, in random parts, equal to Node's", () => {
  const random = seededRandom(180);
  for (let length = 0; length <= 300; length++) {
    const data = random.bytes(length);
    const state = new Sha256();
    for (let at = 0; at < length;) {
      const step = 1 + random.below(70);
      state.update(data.subarray(at, at + step));
      at += step;
    }
    assert.equal(toHex(state.digest()), toHex(nodeCrypto.createHash('sha256').update(data).digest()), `length ${length}`);
  }
});

test("HMAC-SHA256 over it equals Node's createHmac('sha256')", () => {
  const random = seededRandom(4231);
  for (const keyLength of [0, 1, 32, 63, 64, 65, 131]) {
    const key = random.bytes(keyLength);
    const message = random.bytes(random.below(200));
    assert.equal(toHex(hmac(SHA_256, key, message)), toHex(nodeCrypto.createHmac('sha256', key).update(message).digest()));
  }
});

test('a digest is taken once; update after it is refused', () => {
  const state = new Sha256().update(utf8('x'));
  state.digest();
  assert.throws(() => state.digest());
  assert.throws(() => state.update(utf8('y')));
});
