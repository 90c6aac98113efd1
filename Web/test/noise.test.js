import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import {
  CipherState, SymmetricState, HandshakeState, chaChaPolyNonce, hkdf, hash, HASHLEN, BLOCKLEN,
} from '../js/noise.js';
import { NoiseError, NoiseLimits } from '../js/noise-error.js';
import { XK, NN, ALL_PATTERNS } from '../js/handshake-pattern.js';
import { seal } from '../js/chacha20poly1305.js';
import { blake2s } from '../js/blake2s.js';
import { generateKeyPair } from '../js/x25519.js';
import { toHex, utf8, concatBytes } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';

/** @typedef {import('../js/noise-error.js').NoiseErrorKind} NoiseErrorKind */

/**
 * An assertion predicate: a NoiseError of this kind.
 * @param {NoiseErrorKind} kind
 */
const noiseError = (kind) => (/** @type {unknown} */ error) => {
  assert.ok(error instanceof NoiseError, `expected a NoiseError, got ${error}`);
  assert.equal(error.kind, kind, error.message);
  return true;
};

const EMPTY = new Uint8Array(0);
const MAX_NONCE = NoiseLimits.reservedNonce;

// ## Crypto functions

test('the ChaChaPoly nonce: 4 zero bytes, then n little-endian (section 12.3)', () => {
  assert.equal(toHex(chaChaPolyNonce(0n)), '000000000000000000000000');
  assert.equal(toHex(chaChaPolyNonce(1n)), '000000000100000000000000');
  assert.equal(toHex(chaChaPolyNonce(0x0102030405060708n)), '000000000807060504030201');
  assert.equal(toHex(chaChaPolyNonce(MAX_NONCE)), '00000000ffffffffffffffff');
});

test("HKDF (section 4.3) equals RFC 5869 HKDF-BLAKE2s with salt ck and no info (Node's hkdfSync)", () => {
  const random = seededRandom(43);
  for (const ikmLength of [0, 1, 32, 64, 100]) {
    const ck = random.bytes(HASHLEN);
    const ikm = random.bytes(ikmLength);
    const reference = new Uint8Array(nodeCrypto.hkdfSync('blake2s256', ikm, ck, EMPTY, 3 * HASHLEN));
    assert.equal(toHex(concatBytes(...hkdf(ck, ikm, 2))), toHex(reference.subarray(0, 2 * HASHLEN)));
    assert.equal(toHex(concatBytes(...hkdf(ck, ikm, 3))), toHex(reference));
  }
  assert.throws(() => hkdf(new Uint8Array(32), EMPTY, /** @type {any} */ (1)), RangeError);
  assert.throws(() => hkdf(new Uint8Array(32), EMPTY, /** @type {any} */ (4)), RangeError);
  assert.equal(HASHLEN, 32);
  assert.equal(BLOCKLEN, 64);
  assert.equal(toHex(hash(utf8('a'), utf8('bc'))), toHex(blake2s(utf8('abc'))));
});

// ## CipherState

test('CipherState: an empty key passes data through; InitializeKey checks the length', () => {
  const state = new CipherState();
  assert.equal(state.hasKey(), false);
  const data = Uint8Array.of(1, 2, 3);
  const out = state.encryptWithAd(EMPTY, data);
  assert.deepEqual(out, data);
  assert.notEqual(out, data, 'a copy');
  assert.deepEqual(state.decryptWithAd(EMPTY, data), data);
  assert.equal(state.n, 0n);
  assert.throws(() => state.initializeKey(new Uint8Array(31)), noiseError('invalidKey'));
  assert.throws(() => new CipherState(new Uint8Array(33)), noiseError('invalidKey'));
  assert.throws(() => state.rekey(), noiseError('invalidKey'));
});

test('CipherState: ENCRYPT(k, n++, ad, p) with the Noise nonce, decrypted by its twin', () => {
  const random = seededRandom(51);
  const key = random.bytes(32);
  const sender = new CipherState(key);
  const receiver = new CipherState(key);
  key.fill(0); // the states keep copies
  const keyAgain = seededRandom(51).bytes(32);
  for (let i = 0n; i < 5n; i++) {
    const ad = random.bytes(Number(i));
    const plaintext = random.bytes(20);
    const ciphertext = sender.encryptWithAd(ad, plaintext);
    assert.equal(toHex(ciphertext), toHex(seal(keyAgain, chaChaPolyNonce(i), plaintext, ad)));
    assert.equal(sender.n, i + 1n);
    assert.deepEqual(receiver.decryptWithAd(ad, ciphertext), plaintext);
    assert.equal(receiver.n, i + 1n);
  }
});

test('CipherState: a failed decrypt throws decryptionFailed and keeps n', () => {
  const key = seededRandom(52).bytes(32);
  const sender = new CipherState(key);
  const receiver = new CipherState(key);
  const first = sender.encryptWithAd(EMPTY, utf8('first'));
  const second = sender.encryptWithAd(EMPTY, utf8('second'));
  assert.throws(() => receiver.decryptWithAd(EMPTY, second), noiseError('decryptionFailed'), 'reordered');
  assert.equal(receiver.n, 0n);
  const tampered = first.slice();
  tampered[0] ^= 1;
  assert.throws(() => receiver.decryptWithAd(EMPTY, tampered), noiseError('decryptionFailed'));
  assert.throws(() => receiver.decryptWithAd(utf8('x'), first), noiseError('decryptionFailed'), 'other ad');
  for (let length = 0; length < 16; length++) {
    assert.throws(() => receiver.decryptWithAd(EMPTY, first.subarray(0, length)), noiseError('decryptionFailed'));
  }
  assert.equal(receiver.n, 0n);
  assert.deepEqual(receiver.decryptWithAd(EMPTY, first), utf8('first'));
  assert.deepEqual(receiver.decryptWithAd(EMPTY, second), utf8('second'));
  assert.throws(() => receiver.decryptWithAd(EMPTY, second), noiseError('decryptionFailed'), 'replayed');
});

test('CipherState: nonce 2^64 − 1 is reserved (section 5.1)', () => {
  const key = seededRandom(53).bytes(32);
  const sender = new CipherState(key);
  const receiver = new CipherState(key);
  sender.setNonce(MAX_NONCE - 1n);
  receiver.setNonce(MAX_NONCE - 1n);
  const last = sender.encryptWithAd(EMPTY, utf8('last'));
  assert.equal(sender.n, MAX_NONCE);
  assert.throws(() => sender.encryptWithAd(EMPTY, EMPTY), noiseError('nonceExhausted'));
  assert.equal(sender.n, MAX_NONCE);
  assert.deepEqual(receiver.decryptWithAd(EMPTY, last), utf8('last'));
  assert.throws(() => receiver.decryptWithAd(EMPTY, last), noiseError('nonceExhausted'));
  // SetNonce takes 0 to 2^64 − 1 as a bigint, nothing else.
  for (const bad of [-1n, MAX_NONCE + 1n, /** @type {any} */ (5)]) {
    assert.throws(() => sender.setNonce(bad), RangeError, String(bad));
  }
  sender.setNonce(0n);
  assert.equal(sender.n, 0n);
});

test('CipherState: the 65535-byte message limit, both ways, with and without a key', () => {
  const key = seededRandom(54).bytes(32);
  const sender = new CipherState(key);
  const receiver = new CipherState(key);
  const largest = sender.encryptWithAd(EMPTY, new Uint8Array(NoiseLimits.maximumPlaintextLength));
  assert.equal(largest.length, 65535);
  assert.equal(receiver.decryptWithAd(EMPTY, largest).length, 65519);
  assert.throws(() => sender.encryptWithAd(EMPTY, new Uint8Array(65520)), noiseError('messageTooLong'));
  assert.equal(sender.n, 1n, 'a refused encrypt uses no nonce');
  assert.throws(() => receiver.decryptWithAd(EMPTY, new Uint8Array(65536)), noiseError('messageTooLong'));
  const plain = new CipherState();
  assert.equal(plain.encryptWithAd(EMPTY, new Uint8Array(65535)).length, 65535);
  assert.throws(() => plain.encryptWithAd(EMPTY, new Uint8Array(65536)), noiseError('messageTooLong'));
  assert.throws(() => plain.decryptWithAd(EMPTY, new Uint8Array(65536)), noiseError('messageTooLong'));
});

test('CipherState: Rekey() is REKEY of section 4.2 and keeps n', () => {
  const key = seededRandom(55).bytes(32);
  const state = new CipherState(key);
  state.setNonce(7n);
  state.rekey();
  assert.equal(state.n, 7n);
  const newKey = seal(key, chaChaPolyNonce(MAX_NONCE), new Uint8Array(32)).subarray(0, 32);
  assert.equal(toHex(state.encryptWithAd(EMPTY, utf8('x'))), toHex(seal(newKey, chaChaPolyNonce(7n), utf8('x'))));
});

// ## SymmetricState

test('SymmetricState: InitializeSymmetric pads a name of up to HASHLEN bytes, hashes a longer one', () => {
  const short = utf8('Noise_NN_25519_ChaChaPoly_SHA256'); // 32 bytes
  assert.equal(short.length, 32);
  assert.deepEqual(new SymmetricState(short).getHandshakeHash(), short);
  const shorter = utf8('Noise_N');
  assert.equal(toHex(new SymmetricState(shorter).getHandshakeHash()), toHex(concatBytes(shorter, new Uint8Array(25))));
  const long = utf8('Noise_XK_25519_ChaChaPoly_BLAKE2s'); // 33 bytes
  assert.equal(toHex(new SymmetricState(long).getHandshakeHash()), toHex(blake2s(long)));
  assert.equal(new SymmetricState(long).cipherState.hasKey(), false);
});

test('SymmetricState: MixHash, EncryptAndHash without and with a key, DecryptAndHash, Split', () => {
  const name = utf8('Noise_XK_25519_ChaChaPoly_BLAKE2s');
  const a = new SymmetricState(name);
  const b = new SymmetricState(name);
  const h0 = a.getHandshakeHash();
  a.mixHash(utf8('prologue'));
  b.mixHash(utf8('prologue'));
  assert.equal(toHex(a.getHandshakeHash()), toHex(blake2s(concatBytes(h0, utf8('prologue')))));
  // No key yet: the payload travels in the clear and is hashed.
  const clear = a.encryptAndHash(utf8('hello'));
  assert.deepEqual(clear, utf8('hello'));
  assert.deepEqual(b.decryptAndHash(clear), utf8('hello'));
  const ikm = seededRandom(56).bytes(32);
  a.mixKey(ikm);
  b.mixKey(ikm);
  assert.equal(a.cipherState.hasKey(), true);
  const hBefore = b.getHandshakeHash();
  const sealed = a.encryptAndHash(utf8('secret'));
  assert.equal(sealed.length, 6 + 16);
  const tampered = sealed.slice();
  tampered[3] ^= 4;
  assert.throws(() => b.decryptAndHash(tampered), noiseError('decryptionFailed'));
  assert.equal(toHex(b.getHandshakeHash()), toHex(hBefore), 'a failed DecryptAndHash hashes nothing');
  assert.deepEqual(b.decryptAndHash(sealed), utf8('secret'));
  assert.equal(toHex(a.getHandshakeHash()), toHex(b.getHandshakeHash()));
  a.mixKeyAndHash(ikm);
  b.mixKeyAndHash(ikm);
  assert.equal(toHex(a.getHandshakeHash()), toHex(b.getHandshakeHash()));
  const [c1, c2] = a.split();
  const [d1, d2] = b.split();
  assert.deepEqual(d1.decryptWithAd(EMPTY, c1.encryptWithAd(EMPTY, utf8('one'))), utf8('one'));
  assert.deepEqual(d2.decryptWithAd(EMPTY, c2.encryptWithAd(EMPTY, utf8('two'))), utf8('two'));
  assert.throws(() => c1.decryptWithAd(EMPTY, c2.encryptWithAd(EMPTY, EMPTY)), noiseError('decryptionFailed'),
    'c1 and c2 have different keys');
});

// ## HandshakeState

/**
 * Runs a handshake in memory to its end, payloads `payload:<index>`.
 * @param {HandshakeState} initiator @param {HandshakeState} responder
 */
async function runHandshake(initiator, responder) {
  let index = 0;
  while (!initiator.isHandshakeComplete || !responder.isHandshakeComplete) {
    const [writer, reader] = initiator.turn === 'write' ? [initiator, responder] : [responder, initiator];
    assert.equal(reader.turn, 'read');
    const payload = utf8(`payload:${index++}`);
    assert.deepEqual(await reader.readMessage(await writer.writeMessage(payload)), payload);
  }
}

/** @returns {Promise<{initiator: HandshakeState, responder: HandshakeState, responderStatic: import('../js/x25519.js').KeyPair, initiatorStatic: import('../js/x25519.js').KeyPair}>} */
async function freshXK(prologue = utf8('herdr-remote/v1/pid:test')) {
  const initiatorStatic = await generateKeyPair();
  const responderStatic = await generateKeyPair();
  return {
    initiator: new HandshakeState({ pattern: XK, initiator: true, prologue, s: initiatorStatic, rs: responderStatic.publicKey }),
    responder: new HandshakeState({ pattern: XK, initiator: false, prologue, s: responderStatic }),
    initiatorStatic,
    responderStatic,
  };
}

test('XK with random keys: both sides agree, learn the right keys, and transport works both ways', async () => {
  const { initiator, responder, initiatorStatic, responderStatic } = await freshXK();
  assert.equal(initiator.protocolName, 'Noise_XK_25519_ChaChaPoly_BLAKE2s');
  assert.equal(initiator.turn, 'write');
  assert.equal(responder.turn, 'read');
  assert.equal(responder.remoteStaticPublicKey, null);
  await runHandshake(initiator, responder);
  assert.equal(initiator.turn, 'finished');
  assert.equal(toHex(initiator.getHandshakeHash()), toHex(responder.getHandshakeHash()));
  assert.equal(toHex(responder.remoteStaticPublicKey ?? EMPTY), toHex(initiatorStatic.publicKey));
  assert.equal(toHex(initiator.remoteStaticPublicKey ?? EMPTY), toHex(responderStatic.publicKey));
  assert.equal(toHex(initiator.remoteEphemeralPublicKey ?? EMPTY), toHex(responder.localEphemeralPublicKey ?? EMPTY));
  assert.equal(toHex(initiator.localStaticPublicKey ?? EMPTY), toHex(initiatorStatic.publicKey));
  const i = initiator.transportCipherStates();
  const r = responder.transportCipherStates();
  for (let n = 0; n < 3; n++) {
    assert.deepEqual(r.receive.decryptWithAd(EMPTY, i.send.encryptWithAd(EMPTY, utf8(`up ${n}`))), utf8(`up ${n}`));
    assert.deepEqual(i.receive.decryptWithAd(EMPTY, r.send.encryptWithAd(EMPTY, utf8(`down ${n}`))), utf8(`down ${n}`));
  }
  // Reflection: a message sent back to its sender does not open.
  const reflected = i.send.encryptWithAd(EMPTY, utf8('echo'));
  assert.throws(() => i.receive.decryptWithAd(EMPTY, reflected), noiseError('decryptionFailed'));
  // splitCipherStates gives fresh copies each call: c1 is the initiator's send.
  const { c1, c2 } = initiator.splitCipherStates();
  assert.equal(c1.n, 0n);
  assert.equal(c2.n, 0n);
  assert.equal(i.send.n, 4n);
  // Calls after the end.
  await assert.rejects(initiator.writeMessage(), noiseError('handshakeFinished'));
  await assert.rejects(responder.readMessage(new Uint8Array(48)), noiseError('handshakeFinished'));
});

test('every named pattern completes in memory with the keys it needs', async () => {
  for (const pattern of ALL_PATTERNS) {
    const iStatic = await generateKeyPair();
    const rStatic = await generateKeyPair();
    const initiatorNeedsS = pattern.initiatorPreMessage.includes('s') ||
      pattern.messagePatterns.some((m) => m.direction === '->' && m.tokens.includes('s'));
    const responderNeedsS = pattern.responderPreMessage.includes('s') ||
      pattern.messagePatterns.some((m) => m.direction === '<-' && m.tokens.includes('s'));
    const initiator = new HandshakeState({
      pattern, initiator: true, ...(initiatorNeedsS ? { s: iStatic } : {}),
      ...(pattern.responderPreMessage.includes('s') ? { rs: rStatic.publicKey } : {}),
    });
    const responder = new HandshakeState({
      pattern, initiator: false, ...(responderNeedsS ? { s: rStatic } : {}),
      ...(pattern.initiatorPreMessage.includes('s') ? { rs: iStatic.publicKey } : {}),
    });
    await runHandshake(initiator, responder);
    assert.equal(toHex(initiator.getHandshakeHash()), toHex(responder.getHandshakeHash()), pattern.name);
    if (initiatorNeedsS) assert.equal(toHex(responder.remoteStaticPublicKey ?? EMPTY), toHex(iStatic.publicKey));
    if (responderNeedsS) assert.equal(toHex(initiator.remoteStaticPublicKey ?? EMPTY), toHex(rStatic.publicKey));
    const { send } = initiator.transportCipherStates();
    const { receive } = responder.transportCipherStates();
    assert.deepEqual(receive.decryptWithAd(EMPTY, send.encryptWithAd(EMPTY, utf8(pattern.name))), utf8(pattern.name));
  }
});

test('a flipped bit in any handshake message is refused and leaves the reader as it was', async () => {
  const { initiator, responder } = await freshXK();
  for (let index = 0; index < 3; index++) {
    const [writer, reader] = index % 2 === 0 ? [initiator, responder] : [responder, initiator];
    const message = await writer.writeMessage(utf8(`payload ${index}`));
    const hashBefore = toHex(reader.getHandshakeHash());
    const remoteBefore = reader.remoteStaticPublicKey;
    // Every byte of the message, one flipped bit each (the ephemeral, the encrypted static, the tag).
    for (let byte = 0; byte < message.length; byte += 1) {
      const tampered = message.slice();
      tampered[byte] ^= 1 << (byte % 8);
      await assert.rejects(reader.readMessage(tampered), (error) => {
        assert.ok(error instanceof NoiseError);
        assert.ok(error.kind === 'decryptionFailed' || error.kind === 'invalidKey', error.message);
        return true;
      }, `message ${index + 1}, byte ${byte}`);
      assert.equal(toHex(reader.getHandshakeHash()), hashBefore);
      assert.equal(reader.turn, 'read');
      assert.deepEqual(reader.remoteStaticPublicKey, remoteBefore);
    }
    // Truncated and extended messages too.
    await assert.rejects(reader.readMessage(message.subarray(0, message.length - 1)), NoiseError);
    await assert.rejects(reader.readMessage(concatBytes(message, Uint8Array.of(0))), noiseError('decryptionFailed'));
    // The genuine message still reads afterwards.
    assert.deepEqual(await reader.readMessage(message), utf8(`payload ${index}`));
  }
  assert.equal(toHex(initiator.getHandshakeHash()), toHex(responder.getHandshakeHash()));
});

test('the wrong prologue or the wrong responder key fails the handshake', async () => {
  const a = await freshXK(utf8('herdr-remote/v1/pid:one'));
  const other = new HandshakeState({ pattern: XK, initiator: false, prologue: utf8('herdr-remote/v1/pid:two'), s: a.responderStatic });
  await assert.rejects(other.readMessage(await a.initiator.writeMessage()), noiseError('decryptionFailed'));
  const b = await freshXK();
  const impostor = new HandshakeState({
    pattern: XK, initiator: false, prologue: utf8('herdr-remote/v1/pid:test'), s: await generateKeyPair(),
  });
  await assert.rejects(impostor.readMessage(await b.initiator.writeMessage()), noiseError('decryptionFailed'));
});

test('message lengths: too short for the tokens, over 65535 bytes, the largest payload', async () => {
  const { initiator, responder } = await freshXK();
  // Message 1 is e (32) + an encrypted payload (16 + payload).
  for (const length of [0, 1, 31]) {
    await assert.rejects(responder.readMessage(new Uint8Array(length)), noiseError('messageTooShort'), `${length}`);
  }
  // A real public key as e, then less than a tag.
  const e = (await generateKeyPair()).publicKey;
  for (const length of [32, 47]) {
    const message = concatBytes(e, new Uint8Array(length - 32));
    await assert.rejects(responder.readMessage(message), noiseError('decryptionFailed'), `${length}`);
  }
  await assert.rejects(responder.readMessage(new Uint8Array(65536)), noiseError('messageTooLong'));
  // The largest payload of message 1 fills 65535 bytes exactly; one byte more is refused,
  // and the refused write leaves the writer as it was.
  const largest = 65535 - 32 - 16;
  await assert.rejects(initiator.writeMessage(new Uint8Array(largest + 1)), noiseError('messageTooLong'));
  await assert.rejects(initiator.writeMessage(new Uint8Array(70000)), noiseError('messageTooLong'));
  assert.equal(initiator.turn, 'write');
  assert.equal(initiator.localEphemeralPublicKey, null, 'the refused write kept no ephemeral');
  const message = await initiator.writeMessage(new Uint8Array(largest));
  assert.equal(message.length, 65535);
  assert.equal((await responder.readMessage(message)).length, largest);
  // Message 2 (e, ee) is read by the initiator; message 3 carries s: 32 + 16 + 16 + payload.
  await initiator.readMessage(await responder.writeMessage());
  const third = await initiator.writeMessage();
  assert.equal(third.length, 64);
  await assert.rejects(responder.readMessage(third.subarray(0, 47)), noiseError('messageTooShort'));
  await responder.readMessage(third);
  assert.equal(responder.isHandshakeComplete, true);
});

test('turns, overlapping calls, and transport keys before the end', async () => {
  const { initiator, responder } = await freshXK();
  await assert.rejects(initiator.readMessage(new Uint8Array(48)), noiseError('wrongTurn'));
  await assert.rejects(responder.writeMessage(), noiseError('wrongTurn'));
  assert.throws(() => initiator.splitCipherStates(), noiseError('handshakeNotFinished'));
  assert.throws(() => responder.transportCipherStates(), noiseError('handshakeNotFinished'));
  const first = initiator.writeMessage();
  await assert.rejects(initiator.writeMessage(), noiseError('busy'));
  const message = await first;
  const reading = responder.readMessage(message);
  await assert.rejects(responder.readMessage(message), noiseError('busy'));
  await reading;
  assert.equal(responder.turn, 'write');
});

test('Initialize checks the keys the pattern needs', async () => {
  const pair = await generateKeyPair();
  assert.throws(() => new HandshakeState({ pattern: XK, initiator: true, rs: pair.publicKey }), noiseError('missingKey'));
  assert.throws(() => new HandshakeState({ pattern: XK, initiator: true, s: pair }), noiseError('missingKey'));
  assert.throws(() => new HandshakeState({ pattern: XK, initiator: false }), noiseError('missingKey'));
  assert.throws(() => new HandshakeState({ pattern: XK, initiator: true, s: pair, rs: new Uint8Array(31) }),
    noiseError('invalidKey'));
  assert.throws(() => new HandshakeState({ pattern: XK, initiator: false, s: pair, rs: pair.publicKey }),
    noiseError('invalidKey'), 'rs given where XK does not pre-message it');
  assert.throws(() => new HandshakeState({ pattern: NN, initiator: true, re: pair.publicKey }), noiseError('invalidKey'));
  assert.throws(() => new HandshakeState({
    pattern: XK, initiator: true, s: { privateKey: pair.privateKey, publicKey: new Uint8Array(33) }, rs: pair.publicKey,
  }), noiseError('invalidKey'));
  // NN needs no keys at all.
  assert.equal(new HandshakeState({ pattern: NN, initiator: true }).turn, 'write');
});

test('a low-order ephemeral from the peer is refused with invalidKey, state unchanged', async () => {
  const { responder } = await freshXK();
  const message = new Uint8Array(48); // e = 0 (low order), then 16 bytes of "tag"
  await assert.rejects(responder.readMessage(message), noiseError('invalidKey'));
  assert.equal(responder.turn, 'read');
  assert.equal(responder.remoteEphemeralPublicKey, null);
});
