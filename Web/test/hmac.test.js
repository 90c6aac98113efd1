import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import { hmac } from '../js/hmac.js';
import { BLAKE2S_256 } from '../js/blake2s.js';
import { toHex, concatBytes } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';

test("differential: HMAC-BLAKE2s equal to Node's createHmac('blake2s256') for keys around BLOCKLEN", () => {
  const random = seededRandom(2104);
  for (const keyLength of [0, 1, 31, 32, 33, 63, 64, 65, 128, 200]) {
    for (let i = 0; i < 12; i++) {
      const key = random.bytes(keyLength);
      const message = random.bytes(random.below(300));
      assert.equal(toHex(hmac(BLAKE2S_256, key, message)),
        toHex(nodeCrypto.createHmac('blake2s256', key).update(message).digest()), `key ${keyLength}, message ${message.length}`);
    }
  }
});

test('a message in parts equals the joined message', () => {
  const random = seededRandom(5);
  const key = random.bytes(32);
  const a = random.bytes(40);
  const b = random.bytes(1);
  assert.equal(toHex(hmac(BLAKE2S_256, key, a, b)), toHex(hmac(BLAKE2S_256, key, concatBytes(a, b))));
  assert.equal(toHex(hmac(BLAKE2S_256, key)), toHex(hmac(BLAKE2S_256, key, new Uint8Array(0))));
});
