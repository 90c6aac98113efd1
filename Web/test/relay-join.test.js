// The relay's encodings and the join key (interop-facts §5), against the Swift tests' fixed
// vectors (Tests/NoiseTests/PairingTests.swift, computed there independently with Python) and
// docs/companion.md's worked example: its room, join transcripts, signatures, V and /register body.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Canonical, RelayTranscript, RoomName, RelayJoinKey, RelayRequests } from '../js/relay-join.js';
import { CompanionProfile } from '../js/companion-profile.js';
import { RelayJSON } from '../js/relay-json.js';
import { fromHex, toHex, utf8 } from '../js/bytes.js';

const ORIGIN = 'https://relay.example.com';
const ROOM = '9fdd70df39b995dbb0004306a94b7384642c383fa80619baf1c12cf51267ea86';

/** @param {number} byte @param {number} count */
const repeated = (byte, count) => new Uint8Array(count).fill(byte);

/** @param {Uint8Array} verifier @param {Uint8Array} signature @param {Uint8Array} message */
async function verifies(verifier, signature, message) {
  const key = await crypto.subtle.importKey('raw', verifier, { name: 'Ed25519' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message);
}

test('canonical encoding: the interop-facts vector and the empty cases', () => {
  assert.equal(toHex(Canonical.encode('test', [Uint8Array.of(1, 2), utf8('hi')])), '0000000474657374000000020102000000026869');
  assert.equal(toHex(Canonical.encode('', [])), '00000000');
  assert.equal(toHex(Canonical.encode('d', [new Uint8Array(0)])), '000000016400000000');
});

test('room names: the Swift vector, the worked example, 64 lowercase hex', () => {
  const rs = Uint8Array.from({ length: 32 }, (_, i) => i);
  const room = RoomName.derive(rs, 'pid-1234');
  assert.equal(room, 'f383d20dbd1b14a95a66a360d8d96c8c60129f970d99195bf36f84712a35c403');
  assert.ok(RoomName.isValid(room));
  assert.ok(!RoomName.isValid(room.toUpperCase()));
  assert.ok(!RoomName.isValid(room.slice(1)));
  assert.ok(!RoomName.isValid(room + '0'));
  assert.notEqual(RoomName.derive(rs, 'pid-1235'), room);
  assert.equal(RoomName.derive(fromHex('a4e09292b651c278b9772c569f5fa9bb13d906b46ab68c9df9dc2b4409f8a209'), 'BwcHBwcHBwcHBwcHBwcHBw'), ROOM);
});

test('transcripts: join, delete and the attest client data hash, byte for byte', () => {
  const origin = 'https://relay.example';
  assert.equal(toHex(RelayTranscript.join('phone', repeated(0xaa, 32), 'roomname', origin)),
    '00000011697465726d322d72656c61792d6a6f696e0000000101000000010200000020' + 'aa'.repeat(32) +
    '00000008726f6f6d6e616d650000001568747470733a2f2f72656c61792e6578616d706c65');
  assert.equal(RelayTranscript.join('mac', new Uint8Array(0), 'r', 'o')[25], 0x01);
  assert.equal(toHex(RelayTranscript.delete(repeated(0xbb, 32), 'roomname', origin)),
    '00000013697465726d322d72656c61792d64656c657465000000010100000020' + 'bb'.repeat(32) +
    '00000008726f6f6d6e616d650000001568747470733a2f2f72656c61792e6578616d706c65');
  assert.equal(toHex(RelayTranscript.attestClientDataHash(repeated(0xcc, 32), origin)),
    '7ec663a5a7bdc29120b2b0ec92ca549dd75b1bd3ab0cad23614f10fc6d47a795');
});

test('the join key: the Swift vector, signatures bound to role, nonce, room and origin, a non-extractable key', async () => {
  assert.equal(toHex(RelayJoinKey.seed(repeated(0x42, 32))), '9a87373edeadd21a910300e4c26dcc2ece2a8b2a8bd6e10fe9e6a248f6a0f820');
  const key = await RelayJoinKey.fromRoomSecret(repeated(0x42, 32));
  assert.equal(toHex(key.verifier), '4576b485be26221325429b1bfca04347d35547f8caea8e02706f6ed81cab0bb9');
  assert.equal(key.signingKey.extractable, false);
  await assert.rejects(crypto.subtle.exportKey('pkcs8', key.signingKey));
  const nonce = crypto.getRandomValues(new Uint8Array(32));
  const signature = await key.signJoin('mac', nonce, 'room', 'https://o');
  assert.equal(signature.length, 64);
  assert.ok(await verifies(key.verifier, signature, RelayTranscript.join('mac', nonce, 'room', 'https://o')));
  assert.ok(!await verifies(key.verifier, signature, RelayTranscript.join('phone', nonce, 'room', 'https://o')));
  assert.ok(!await verifies(key.verifier, signature, RelayTranscript.join('mac', nonce, 'room2', 'https://o')));
  assert.ok(!await verifies(key.verifier, signature, RelayTranscript.join('mac', nonce, 'room', 'https://p')));
  const deletion = await key.signDelete(nonce, 'room', 'https://o');
  assert.ok(await verifies(key.verifier, deletion, RelayTranscript.delete(nonce, 'room', 'https://o')));
  assert.throws(() => RelayJoinKey.seed(Uint8Array.of(1, 2, 3)), RangeError);
  await assert.rejects(RelayJoinKey.fromRoomSecret(new Uint8Array(33)), RangeError);
  assert.equal(RelayJoinKey.makeRoomSecret().length, 32);
});

test("docs/companion.md's worked example: V, both signed joins of the session, the /register body", async () => {
  const key = await RelayJoinKey.fromRoomSecret(repeated(0x08, 32));
  assert.equal(toHex(key.verifier), 'bbd742f841d5318aa892458cb1a6e53fe202d04ffe38191b808a6aa6adce9c2b');
  const phoneTranscript = RelayTranscript.join('phone', repeated(0x0e, 32), ROOM, ORIGIN);
  assert.equal(toHex(phoneTranscript),
    '00000011' + toHex(utf8('iterm2-relay-join')) + '00000001' + '01' + '00000001' + '02' + '00000020' + '0e'.repeat(32) +
    '00000040' + toHex(utf8(ROOM)) + '00000019' + toHex(utf8(ORIGIN)));
  // Ed25519 is deterministic: the device's Proof is the documented one, byte for byte.
  assert.equal(`{"sig":"${RelayJSON.base64(await key.signJoin('phone', repeated(0x0e, 32), ROOM, ORIGIN))}"}`,
    '{"sig":"vXgAWRMi+gA+nFQIhmESctRP85LAYTzWojPlVndD3LQFryZP18B/bE6gku7EuCS6+0Hx+c6Lgd6kwOEcJZZ8Bw=="}');
  assert.equal(RelayJSON.base64(await key.signJoin('mac', repeated(0x0d, 32), ROOM, ORIGIN)),
    'HuXcm6Lxz/bnCCBF00BXuMT3jKh2twqZnf3e3G8JbggGZhxq8wogNlvFjAD+u6TRtU9wCRuFAFcpFHZzEPwWCQ==');
  assert.equal(RelayRequests.register(repeated(0x0c, 24), key.verifier),
    '{"registrationToken":"DAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM","verifier":"u9dC+EHVMYqokkWMsablP+IC0E/+OBkbgIpqpq3OnCs="}');
  assert.equal(RelayRequests.roomCheck(key.verifier),
    '{"registrationToken":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","verifier":"u9dC+EHVMYqokkWMsablP+IC0E/+OBkbgIpqpq3OnCs="}');
  assert.equal(RelayRequests.delete(repeated(1, 2), repeated(2, 1)), '{"challenge":"AQE=","signature":"Ag=="}');
});

test('the 6-digit code and the prologue: the Swift vectors and the worked example', () => {
  const hash = Uint8Array.from({ length: 32 }, (_, i) => 100 + i);
  assert.equal(CompanionProfile.sas(CompanionProfile.herdrRemote, hash), '626614');
  assert.equal(CompanionProfile.sas(CompanionProfile.iTerm2, hash), '324852');
  assert.equal(CompanionProfile.sas(CompanionProfile.herdrRemote,
    fromHex('36ebe205bcdfc499a25e6923f4450fa8d48196ceb4fa0ce077d9d8ec4a36926d')), '007462', 'zero-padded');
  assert.equal(CompanionProfile.sas(CompanionProfile.herdrRemote,
    fromHex('da4787c3443c963f618101149c06b5f1a675dd2cdc69ef0a7b7b037f6fd195db')), '138557', 'the worked example shows 138 557');
  assert.deepEqual(CompanionProfile.prologue(CompanionProfile.herdrRemote, 'abc'), utf8('herdr-remote/v1/pid:abc'));
  assert.deepEqual(CompanionProfile.prologue(CompanionProfile.iTerm2, 'abc'), utf8('iterm2-companion/v1/pid:abc'));
  assert.equal(CompanionProfile.protocolName, 'Noise_XK_25519_ChaChaPoly_BLAKE2s');
});
