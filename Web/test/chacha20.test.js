import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import { chacha20, chacha20Block, MAX_COUNTER } from '../js/chacha20.js';
import { fromHex, toHex, utf8 } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';
import { SUNSCREEN, IETF_CONTRIBUTION, JABBERWOCKY, countingKey } from '../test-support/rfc8439-texts.js';

const ZERO_KEY = new Uint8Array(32);
const ZERO_NONCE = new Uint8Array(12);
const KEY_ONE = fromHex('0000000000000000000000000000000000000000000000000000000000000001');
const NONCE_TWO = fromHex('000000000000000000000002');
const JABBERWOCKY_KEY = fromHex('1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0');

test('RFC 8439 2.3.2: the block function', () => {
  const block = chacha20Block(countingKey(0), 1, fromHex('000000090000004a00000000'));
  assert.equal(toHex(block),
    '10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e' +
    'd2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e');
});

test('RFC 8439 2.4.2: encryption', () => {
  const ciphertext = chacha20(countingKey(0), 1, fromHex('000000000000004a00000000'), utf8(SUNSCREEN));
  assert.equal(toHex(ciphertext),
    '6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b' +
    'f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8' +
    '07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736' +
    '5af90bbf74a35be6b40b8eedf2785e42874d');
});

test('RFC 8439 A.1: block function vectors 1–5', () => {
  const keyFF = new Uint8Array(32);
  keyFF[1] = 0xff;
  const vectors = /** @type {const} */ ([
    [ZERO_KEY, 0, ZERO_NONCE,
      '76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586'],
    [ZERO_KEY, 1, ZERO_NONCE,
      '9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f'],
    [KEY_ONE, 1, ZERO_NONCE,
      '3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0'],
    [keyFF, 2, ZERO_NONCE,
      '72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096'],
    [ZERO_KEY, 0, NONCE_TWO,
      'c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c78a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d'],
  ]);
  for (const [key, counter, nonce, expected] of vectors) {
    assert.equal(toHex(chacha20Block(key, counter, nonce)), expected);
  }
});

test('RFC 8439 A.2: encryption vectors 1–3', () => {
  assert.equal(toHex(chacha20(ZERO_KEY, 0, ZERO_NONCE, new Uint8Array(64))),
    '76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586');
  assert.equal(toHex(chacha20(KEY_ONE, 1, NONCE_TWO, utf8(IETF_CONTRIBUTION))),
    'a3fbf07df3fa2fde4f376ca23e82737041605d9f4f4f57bd8cff2c1d4b7955ec2a97948bd3722915c8f3d337f7d370050e9e96d647b7c39f56e031ca5eb6250d' +
    '4042e02785ececfa4b4bb5e8ead0440e20b6e8db09d881a7c6132f420e52795042bdfa7773d8a9051447b3291ce1411c680465552aa6c405b7764d5e87bea85a' +
    'd00f8449ed8f72d0d662ab052691ca66424bc86d2df80ea41f43abf937d3259dc4b2d0dfb48a6c9139ddd7f76966e928e635553ba76c5c879d7b35d49eb2e62b' +
    '0871cdac638939e25e8a1e0ef9d5280fa8ca328b351c3c765989cbcf3daa8b6ccc3aaf9f3979c92b3720fc88dc95ed84a1be059c6499b9fda236e7e818b04b0b' +
    'c39c1e876b193bfe5569753f88128cc08aaa9b63d1a16f80ef2554d7189c411f5869ca52c5b83fa36ff216b9c1d30062bebcfd2dc5bce0911934fda79a86f6e6' +
    '98ced759c3ff9b6477338f3da4f9cd8514ea9982ccafb341b2384dd902f3d1ab7ac61dd29c6f21ba5b862f3730e37cfdc4fd806c22f221');
  assert.equal(toHex(chacha20(JABBERWOCKY_KEY, 42, NONCE_TWO, utf8(JABBERWOCKY))),
    '62e6347f95ed87a45ffae7426f27a1df5fb69110044c0d73118effa95b01e5cf166d3df2d721caf9b21e5fb14c616871fd84c54f9d65b283196c7fe4f60553eb' +
    'f39c6402c42234e32a356b3e764312a61a5532055716ead6962568f87d3f3f7704c6a8d1bcd1bf4d50d6154b6da731b187b58dfd728afa36757a797ac188d1');
});

test('RFC 8439 A.4 and 2.6.2: Poly1305 one-time keys from block 0', () => {
  const vectors = /** @type {const} */ ([
    [ZERO_KEY, ZERO_NONCE, '76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7'],
    [KEY_ONE, NONCE_TWO, 'ecfa254f845f647473d3cb140da9e87606cb33066c447b87bc2666dde3fbb739'],
    [JABBERWOCKY_KEY, NONCE_TWO, '965e3bc6f9ec7ed9560808f4d229f94b137ff275ca9b3fcbdd59deaad23310ae'],
    [countingKey(0x80), fromHex('000000000001020304050607'), '8ad5a08b905f81cc815040274ab29471a833b637e3fd0da508dbb8e2fdd1a646'],
  ]);
  for (const [key, nonce, expected] of vectors) {
    assert.equal(toHex(chacha20Block(key, 0, nonce).subarray(0, 32)), expected);
  }
});

/**
 * Node's own ChaCha20 (OpenSSL's): a 16-byte IV of the 32-bit counter then the 12-byte nonce.
 * @param {Uint8Array} key @param {number} counter @param {Uint8Array} nonce @param {Uint8Array} data
 */
function nodeChaCha20(key, counter, nonce, data) {
  const iv = new Uint8Array(16);
  new DataView(iv.buffer).setUint32(0, counter, true);
  iv.set(nonce, 4);
  const cipher = nodeCrypto.createCipheriv('chacha20', key, iv);
  const head = cipher.update(data);
  const tail = cipher.final();
  const out = new Uint8Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

test("differential: equal to Node's chacha20 on 300 random cases (fixed seed), aligned or not", () => {
  const random = seededRandom(8439);
  for (let i = 0; i < 300; i++) {
    const key = random.bytes(32);
    const nonce = random.bytes(12);
    const length = random.below(2001);
    const counter = i % 10 === 0 ? MAX_COUNTER - Math.ceil(length / 64) + 1 : random.next() >>> 8;
    // An input at an odd offset takes the byte-at-a-time path.
    const backing = random.bytes(length + 3);
    const input = i % 2 === 0 ? backing.subarray(0, length) : backing.subarray(3);
    assert.equal(toHex(chacha20(key, counter, nonce, input)), toHex(nodeChaCha20(key, counter, nonce, input)),
      `case ${i}, ${length} bytes, counter ${counter}`);
  }
});

test('encryption in place, and decryption is the same operation', () => {
  const random = seededRandom(5);
  const key = random.bytes(32);
  const nonce = random.bytes(12);
  const plaintext = random.bytes(333);
  const buffer = plaintext.slice();
  chacha20(key, 7, nonce, buffer, buffer);
  assert.deepEqual(buffer, chacha20(key, 7, nonce, plaintext));
  chacha20(key, 7, nonce, buffer, buffer);
  assert.deepEqual(buffer, plaintext);
});

test('boundaries: key, nonce, counter, output length', () => {
  const nonce = new Uint8Array(12);
  assert.throws(() => chacha20Block(new Uint8Array(31), 0, nonce), RangeError);
  assert.throws(() => chacha20Block(new Uint8Array(33), 0, nonce), RangeError);
  assert.throws(() => chacha20Block(ZERO_KEY, 0, new Uint8Array(11)), RangeError);
  assert.throws(() => chacha20Block(ZERO_KEY, 0, new Uint8Array(13)), RangeError);
  assert.throws(() => chacha20Block(ZERO_KEY, -1, nonce), RangeError);
  assert.throws(() => chacha20Block(ZERO_KEY, 2 ** 32, nonce), RangeError);
  assert.throws(() => chacha20Block(ZERO_KEY, 1.5, nonce), RangeError);
  assert.equal(chacha20Block(ZERO_KEY, MAX_COUNTER, nonce).length, 64);
  // The last counter covers exactly one more block; a 65th byte would need counter 2^32.
  assert.equal(chacha20(ZERO_KEY, MAX_COUNTER, nonce, new Uint8Array(64)).length, 64);
  assert.throws(() => chacha20(ZERO_KEY, MAX_COUNTER, nonce, new Uint8Array(65)), RangeError);
  assert.equal(chacha20(ZERO_KEY, MAX_COUNTER, nonce, new Uint8Array(0)).length, 0);
  assert.throws(() => chacha20(ZERO_KEY, 0, nonce, new Uint8Array(10), new Uint8Array(9)), RangeError);
  assert.equal(chacha20(ZERO_KEY, 0, nonce, new Uint8Array(10), new Uint8Array(11)).length, 11);
});
