import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import { seal, open, TAG_LENGTH } from '../js/chacha20poly1305.js';
import { fromHex, toHex, utf8, concatBytes } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';
import { SUNSCREEN, countingKey } from '../test-support/rfc8439-texts.js';

test('RFC 8439 2.8.2: seal and open', () => {
  const key = countingKey(0x80);
  const nonce = fromHex('070000004041424344454647');
  const aad = fromHex('50515253c0c1c2c3c4c5c6c7');
  const sealed = seal(key, nonce, utf8(SUNSCREEN), aad);
  assert.equal(toHex(sealed),
    'd31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b' +
    '1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc' +
    '3ff4def08e4b7a9de576d26586cec64b6116' + '1ae10b594f09e26a7e902ecbd0600691');
  assert.equal(new TextDecoder().decode(open(key, nonce, sealed, aad) ?? undefined), SUNSCREEN);
});

test('RFC 8439 A.5: decryption', () => {
  const key = fromHex('1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0');
  const nonce = fromHex('000000000102030405060708');
  const aad = fromHex('f33388860000000000004e91');
  const sealed = fromHex(
    '64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb24c6cfc18755d43eea09ee94e382d26b0' +
    'bdb7b73c321b0100d4f03b7f355894cf332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c855' +
    '9797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4b9166c767b804d46a59b5216cde7a4e9' +
    '9040c5a40433225ee282a1b0a06c523eaf4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a' +
    '0bb2316053fa76991955ebd63159434ecebb4e466dae5a1073a6727627097a1049e617d91d361094fa68f0ff77987130' +
    '305beaba2eda04df997b714d6c6f2c29a6ad5cb4022b02709b' + 'eead9d67890cbb22392336fea1851f38');
  const plaintext = open(key, nonce, sealed, aad);
  assert.ok(plaintext);
  assert.equal(new TextDecoder().decode(plaintext),
    'Internet-Drafts are draft documents valid for a maximum of six months and may be updated, replaced, ' +
    'or obsoleted by other documents at any time. It is inappropriate to use Internet-Drafts as reference ' +
    'material or to cite them other than as /\u201cwork in progress./\u201d');
});

/**
 * Node's own ChaCha20-Poly1305 (OpenSSL's): ciphertext ‖ tag.
 * @param {Uint8Array} key @param {Uint8Array} nonce @param {Uint8Array} plaintext @param {Uint8Array} aad
 */
function nodeSeal(key, nonce, plaintext, aad) {
  const cipher = nodeCrypto.createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
  cipher.setAAD(aad);
  return concatBytes(cipher.update(plaintext), cipher.final(), cipher.getAuthTag());
}

/**
 * @param {Uint8Array} key @param {Uint8Array} nonce @param {Uint8Array} sealed @param {Uint8Array} aad
 * @returns {Uint8Array | null}
 */
function nodeOpen(key, nonce, sealed, aad) {
  const decipher = nodeCrypto.createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  try {
    return concatBytes(decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final());
  } catch {
    return null;
  }
}

test("differential: equal to Node's chacha20-poly1305 on 400 random cases (fixed seed), both ways", () => {
  const random = seededRandom(20);
  for (let i = 0; i < 400; i++) {
    const key = random.bytes(32);
    const nonce = random.bytes(12);
    const plaintext = random.bytes(random.below(2001));
    const aad = random.bytes(i % 4 === 0 ? 0 : random.below(70));
    const ours = seal(key, nonce, plaintext, aad);
    assert.equal(toHex(ours), toHex(nodeSeal(key, nonce, plaintext, aad)), `case ${i}: ${plaintext.length} bytes`);
    assert.deepEqual(open(key, nonce, ours, aad), plaintext);
    assert.deepEqual(nodeOpen(key, nonce, ours, aad), plaintext);
  }
});

test('a flipped bit anywhere in ciphertext, tag or data is refused (null), as Node refuses it', () => {
  const random = seededRandom(21);
  for (const length of [0, 1, 16, 64, 129]) {
    const key = random.bytes(32);
    const nonce = random.bytes(12);
    const aad = random.bytes(5);
    const sealed = seal(key, nonce, random.bytes(length), aad);
    for (let index = 0; index < sealed.length; index++) {
      const tampered = sealed.slice();
      tampered[index] ^= 1 << (index % 8);
      assert.equal(open(key, nonce, tampered, aad), null, `byte ${index} of ${sealed.length}`);
      assert.equal(nodeOpen(key, nonce, tampered, aad), null);
    }
    for (let index = 0; index < aad.length; index++) {
      const otherAad = aad.slice();
      otherAad[index] ^= 0x80;
      assert.equal(open(key, nonce, sealed, otherAad), null);
    }
    const otherNonce = nonce.slice();
    otherNonce[11] ^= 1;
    assert.equal(open(key, otherNonce, sealed, aad), null);
    const otherKey = key.slice();
    otherKey[0] ^= 1;
    assert.equal(open(otherKey, nonce, sealed, aad), null);
    assert.equal(open(key, nonce, sealed.subarray(0, sealed.length - 1), aad), null, 'truncated');
    assert.equal(open(key, nonce, concatBytes(sealed, Uint8Array.of(0)), aad), null, 'extended');
  }
});

test('boundaries: empty plaintext, shorter than a tag, key and nonce lengths', () => {
  const key = new Uint8Array(32);
  const nonce = new Uint8Array(12);
  const empty = seal(key, nonce, new Uint8Array(0));
  assert.equal(empty.length, TAG_LENGTH);
  assert.deepEqual(open(key, nonce, empty), new Uint8Array(0));
  for (let length = 0; length < TAG_LENGTH; length++) {
    assert.equal(open(key, nonce, empty.subarray(0, length)), null, `${length} bytes`);
  }
  assert.throws(() => seal(new Uint8Array(31), nonce, new Uint8Array(1)), RangeError);
  assert.throws(() => seal(key, new Uint8Array(8), new Uint8Array(1)), RangeError);
  assert.throws(() => open(new Uint8Array(33), nonce, empty), RangeError);
  assert.throws(() => open(key, new Uint8Array(13), empty), RangeError);
  assert.throws(() => open(key, new Uint8Array(13), new Uint8Array(3)), RangeError, 'checked before the length');
});

test('the Noise maximum: a 65519-byte plaintext seals to 65535 bytes and opens', () => {
  const random = seededRandom(22);
  const key = random.bytes(32);
  const nonce = random.bytes(12);
  const plaintext = random.bytes(65519);
  const sealed = seal(key, nonce, plaintext);
  assert.equal(sealed.length, 65535);
  assert.equal(toHex(sealed), toHex(nodeSeal(key, nonce, plaintext, new Uint8Array(0))));
  assert.deepEqual(open(key, nonce, sealed), plaintext);
});
