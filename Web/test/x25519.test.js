import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPair, dh, publicKeyOf, importPrivateKeyInsecureForTestsOnly, KEY_LENGTH } from '../js/x25519.js';
import { fromHex, toHex } from '../js/bytes.js';

test('RFC 7748 5.2: the two scalar-multiplication vectors (unclamped scalars, a u with its top bit set)', async () => {
  const vectors = [
    ['a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4',
      'e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c',
      'c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552'],
    ['4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d',
      'e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493',
      '95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957'],
  ];
  for (const [scalar, u, output] of vectors) {
    const pair = await importPrivateKeyInsecureForTestsOnly(fromHex(scalar));
    assert.equal(toHex(await dh(pair.privateKey, fromHex(u))), output);
  }
});

test('RFC 7748 5.2: the iterated test after 1 and 1,000 iterations', async () => {
  let k = new Uint8Array(32);
  k[0] = 9;
  let u = k.slice();
  for (let i = 1; i <= 1000; i++) {
    const pair = await importPrivateKeyInsecureForTestsOnly(k);
    const next = await dh(pair.privateKey, u);
    u = k;
    k = next;
    if (i === 1) assert.equal(toHex(k), '422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079');
  }
  assert.equal(toHex(k), '684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51');
});

test('RFC 7748 6.1: Alice and Bob', async () => {
  const alice = await importPrivateKeyInsecureForTestsOnly(
    fromHex('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a'));
  const bob = await importPrivateKeyInsecureForTestsOnly(
    fromHex('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb'));
  assert.equal(toHex(alice.publicKey), '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a');
  assert.equal(toHex(bob.publicKey), 'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f');
  const shared = '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742';
  assert.equal(toHex(await dh(alice.privateKey, bob.publicKey)), shared);
  assert.equal(toHex(await dh(bob.privateKey, alice.publicKey)), shared);
  assert.equal(toHex(await publicKeyOf(alice.privateKey)), toHex(alice.publicKey));
  assert.equal(alice.privateKey.extractable, false);
});

test('generated key pairs: non-extractable by default, agree with each other, public key recomputable', async () => {
  const a = await generateKeyPair();
  const b = await generateKeyPair();
  assert.equal(a.privateKey.extractable, false);
  assert.equal(a.privateKey.type, 'private');
  assert.equal(a.publicKey.length, KEY_LENGTH);
  assert.notEqual(toHex(a.publicKey), toHex(b.publicKey));
  assert.equal(toHex(await dh(a.privateKey, b.publicKey)), toHex(await dh(b.privateKey, a.publicKey)));
  assert.equal(toHex(await publicKeyOf(a.privateKey)), toHex(a.publicKey));
  // A CryptoKey survives structured cloning (what IndexedDB stores) and still works.
  const clone = structuredClone(a.privateKey);
  assert.equal(toHex(await dh(clone, b.publicKey)), toHex(await dh(a.privateKey, b.publicKey)));
  assert.equal((await generateKeyPair({ extractable: true })).privateKey.extractable, true);
});

test('low-order public keys are refused (an all-zero secret)', async () => {
  const pair = await generateKeyPair();
  const zero = new Uint8Array(32);
  const one = new Uint8Array(32);
  one[0] = 1;
  // p − 1 and p (≡ 0), little-endian: also of low order.
  const pMinusOne = fromHex('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f');
  const p = fromHex('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f');
  for (const bad of [zero, one, pMinusOne, p]) {
    await assert.rejects(dh(pair.privateKey, bad), /X25519/, toHex(bad));
  }
});

test('boundaries: public and private keys are exactly 32 bytes', async () => {
  const pair = await generateKeyPair();
  for (const length of [0, 31, 33]) {
    await assert.rejects(dh(pair.privateKey, new Uint8Array(length)), RangeError);
    await assert.rejects(importPrivateKeyInsecureForTestsOnly(new Uint8Array(length)), RangeError);
  }
});
