import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HandshakeState, CipherState } from '../js/noise.js';
import { XK } from '../js/handshake-pattern.js';
import { importPrivateKeyInsecureForTestsOnly } from '../js/x25519.js';
import { fromHex, toHex, utf8, concatBytes } from '../js/bytes.js';
import { readShared } from '../test-support/support.js';

/**
 * @typedef {object} Vector a cacophony-format vector of shared/vectors/noise-xk-vectors.json
 * @property {string} protocol_name
 * @property {string} init_prologue
 * @property {string} init_static
 * @property {string} init_ephemeral
 * @property {string} init_remote_static
 * @property {string} resp_prologue
 * @property {string} resp_static
 * @property {string} resp_ephemeral
 * @property {string} handshake_hash
 * @property {{payload: string, ciphertext: string}[]} messages
 */

/** @param {string} hex */
const key = (hex) => importPrivateKeyInsecureForTestsOnly(fromHex(hex));

test('shared vectors: Noise_XK_25519_ChaChaPoly_BLAKE2s, both roles, every message and the handshake hash', async () => {
  /** @type {Vector[]} */
  const vectors = JSON.parse(readShared('vectors/noise-xk-vectors.json')).vectors;
  const ours = vectors.filter((vector) => vector.protocol_name === 'Noise_XK_25519_ChaChaPoly_BLAKE2s');
  assert.ok(ours.length >= 1, 'the file has the BLAKE2s vector');
  for (const vector of ours) {
    const initiator = new HandshakeState({
      pattern: XK, initiator: true, prologue: fromHex(vector.init_prologue), s: await key(vector.init_static),
      rs: fromHex(vector.init_remote_static), insecureFixedEphemeralForTestsOnly: await key(vector.init_ephemeral),
    });
    const responder = new HandshakeState({
      pattern: XK, initiator: false, prologue: fromHex(vector.resp_prologue), s: await key(vector.resp_static),
      insecureFixedEphemeralForTestsOnly: await key(vector.resp_ephemeral),
    });
    assert.equal(initiator.protocolName, vector.protocol_name);
    const handshakeCount = XK.messagePatterns.length;
    // Handshake and transport messages alternate, the initiator first.
    for (const [index, message] of vector.messages.slice(0, handshakeCount).entries()) {
      const [writer, reader] = index % 2 === 0 ? [initiator, responder] : [responder, initiator];
      const written = await writer.writeMessage(fromHex(message.payload));
      assert.equal(toHex(written), message.ciphertext, `handshake message ${index + 1}`);
      assert.equal(toHex(await reader.readMessage(written)), message.payload);
    }
    assert.equal(toHex(initiator.getHandshakeHash()), vector.handshake_hash);
    assert.equal(toHex(responder.getHandshakeHash()), vector.handshake_hash);
    const i = initiator.transportCipherStates();
    const r = responder.transportCipherStates();
    for (const [index, message] of vector.messages.entries()) {
      if (index < handshakeCount) continue;
      const [send, receive] = index % 2 === 0 ? [i.send, r.receive] : [r.send, i.receive];
      const ciphertext = send.encryptWithAd(new Uint8Array(0), fromHex(message.payload));
      assert.equal(toHex(ciphertext), message.ciphertext, `transport message ${index + 1}`);
      assert.equal(toHex(receive.decryptWithAd(new Uint8Array(0), ciphertext)), message.payload);
    }
  }
});

// docs/companion.md, "A worked example": fixed keys (each one byte repeated), device the
// initiator, computer the responder, empty handshake payloads, prologue
// "herdr-remote/v1/pid:" + pid. Each frame is the transport message of the flag byte 00 (the
// last chunk) then the application message, each side counting its nonces from 0.

const PROLOGUE = utf8('herdr-remote/v1/pid:BwcHBwcHBwcHBwcHBwcHBw');

/** @param {number} byte @returns {Uint8Array} 32 × byte */
const repeated = (byte) => new Uint8Array(32).fill(byte);

/** @typedef {[sender: 'device' | 'computer', nonce: number, message: Uint8Array, frame: string]} Frame */

/**
 * Runs one worked-example handshake and its frames; returns the handshake hash.
 * @param {number} deviceEphemeral @param {number} computerEphemeral
 * @param {[string, string, string]} handshake the three messages' hex
 * @param {Frame[]} frames
 */
async function workedExample(deviceEphemeral, computerEphemeral, handshake, frames) {
  const computerStatic = await key(toHex(repeated(0x01)));
  const device = new HandshakeState({
    pattern: XK, initiator: true, prologue: PROLOGUE, s: await key(toHex(repeated(0x02))),
    rs: computerStatic.publicKey, insecureFixedEphemeralForTestsOnly: await key(toHex(repeated(deviceEphemeral))),
  });
  const computer = new HandshakeState({
    pattern: XK, initiator: false, prologue: PROLOGUE, s: computerStatic,
    insecureFixedEphemeralForTestsOnly: await key(toHex(repeated(computerEphemeral))),
  });
  for (const [index, expected] of handshake.entries()) {
    const [writer, reader] = index % 2 === 0 ? [device, computer] : [computer, device];
    const message = await writer.writeMessage();
    assert.equal(toHex(message), expected, `handshake message ${index + 1}`);
    assert.deepEqual(await reader.readMessage(message), new Uint8Array(0));
  }
  assert.equal(toHex(computer.remoteStaticPublicKey ?? new Uint8Array(0)), toHex((await key(toHex(repeated(0x02)))).publicKey));
  /** @type {Record<'device' | 'computer', {send: CipherState, receive: CipherState}>} */
  const ends = { device: device.transportCipherStates(), computer: computer.transportCipherStates() };
  for (const [sender, nonce, message, frame] of frames) {
    const receiver = sender === 'device' ? 'computer' : 'device';
    assert.equal(ends[sender].send.n, BigInt(nonce));
    const written = ends[sender].send.encryptWithAd(new Uint8Array(0), concatBytes(Uint8Array.of(0), message));
    assert.equal(toHex(written), frame, `${sender}'s frame ${nonce}`);
    assert.deepEqual(ends[receiver].receive.decryptWithAd(new Uint8Array(0), written), concatBytes(Uint8Array.of(0), message));
  }
  return toHex(device.getHandshakeHash());
}

test('docs/companion.md worked example: the pairing handshake, its hash and frames', async () => {
  const hash = await workedExample(0x03, 0x04, [
    '5dfedd3b6bd47f6fa28ee15d969d5bb0ea53774d488bdaf9df1c6e0124b3ef22fbad85ea319902b2c65b210c2ff2672f',
    'ac01b2209e86354fb853237b5de0f4fab13c7fcbf433a61c019369617fecf10bcbe843e5c1ab339d011eb377e5416001',
    '29930eca564e42b125d0a2a0be546396d2b8740db50789d516b7789561d69a13' +
      'b8857a98e72f887638d8570675a53d5b8f14858c9b574608dc553660c65768fd',
  ], /** @type {Frame[]} */ ([
  ['computer', 0, utf8('{"pairing":"accepted"}'),
    '27e8c2b625904b521d5fcbbde4d64e79eedad9343c5451b88e2f2e8a7cb1437c549a08e350a1f2'],
  ['device', 0, utf8('{"status":{"v":1,"name":"phone","roomSecret":"CAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAg=","registered":false}}'),
    '5d07e2969afcd44e6637d2c4265ef200ea957a5815c4e723e0cef4c31574b3671ad7c2769c447671732803643eb762e8' +
      '7049f6955c6994dc23e9fd44109f32632f389df0923d6fee1967ee78ceab70f4261ed2f4c3ef9a9efec4d7a07f15be86' +
      '06cd5d1aed627549cdee02b0aebedf5371d55c3ac43bbf550442064efc560eca4f'],
  ['computer', 1, utf8('{"home":["[fd00::7]:4610"]}'),
    '4e9a71e65fcf5c102521f8528b28e95a47e5135f842f825f60066d784fddfc480daf7cab6650cb69b75ea6d8'],
  ['computer', 2, utf8('{"ack":"status"}'),
    '65e1b76d41f036a5725700e72618081ebfa3a8875bef67ed6cb4379f4ef5ec4eb4'],
  ['device', 1, utf8('{"registered":true}'),
    '569d09a6f57f12ebaaef2556b293a6ef4ab97eed4b056175786010ec1b6e27e5c516a996'],  ]));
  assert.equal(hash, 'da4787c3443c963f618101149c06b5f1a675dd2cdc69ef0a7b7b037f6fd195db');
});

test('docs/companion.md worked example: the session handshake and every frame of the session', async () => {
  await workedExample(0x05, 0x06, [
    '50a61409b1ddd0325e9b16b700e719e9772c07000b1bd7786e907c653d20495d3ae7e416c3582ca802d91826e79400bf',
    'f5b2d6e60f9477e310c2982daaa6c9136c108a1777c5947e448fa37d681745577f4727dd0fea56b532c2e68278069a98',
    'c2e1a6f5cb29eee30d676be5de644c44d03d728567f22d7b84b0f852e174d680' +
      '806df3d601fc148989af3a3563f6174cbbb0b01d6a79a5d79192ee7728ff1856',
  ], /** @type {Frame[]} */ ([
  ['device', 0, utf8('{"status":{"v":1,"name":"phone","roomSecret":"CAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAg=","registered":true}}'),
    'cf85a0aa5d066258ad4351c4dc091a7c6a4959f4bc7e33313e9017ec6387c85ad7a6867fb1dd9f69d3238d2f57a8325b' +
      'e8c115d18b3ec9ae0843c8eca1a07a2ae47bf5891c085397de4d9859fe1d7540f0cb92bdac304d9ea4ad5a3ae00b0ac2' +
      '60a60a7066dadada8053fb2395a27a4255f729ed284e71e75c1b3117ca6d1a9c'],
  ['computer', 0, utf8('{"serves":{"screen":1}}'),
    'e2ae577eb9a1c1dfd85043404f8349ebf470ed1e8722114c7bd9885b5b0c1d7fba324155452281d4'],
  ['computer', 1, utf8('{"ack":"status"}'),
    'bf4a5868038309450f31afa619d733cbfe27eac35f81268eb05c409fb34ef99082'],
  ['computer', 2, utf8('{"home":["[fd00::7]:4610"]}'),
    'ae2ddf3303c53f971bb721a3679d13d9209d92b0cd3f3694e2e7bd8d4435fd3e1a250938bcd73e92821665cb'],
  ['device', 1, fromHex('010100000001005000180040000000'),
    '7d2286d220753baaa57e8308dbcb576ac844a7096dd27547105977978488d5db'],
  ['computer', 3, fromHex('03000000010b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b000000000000000000400000'),
    '4e5d54a61a0f30a54f9e2c4c2ac3166a98494f2d5e85afb3fad138c8b8331e47881e430bf0aeea072b1abe7a8e6f51a9' +
      '6ef9'],
  ['device', 2, utf8('{"window":{"stream":1,"bytes":262144}}'),
    'aa942e2151cc9e3937efda52fa5aa160da54ce24d9d0ef1c962b6cff9e37f7410c16535b8ddffb99b4a92cb1c2fd1d5c' +
      'b41e76be36523f'],
  ['computer', 4, fromHex('040000000100000000000000002420'),
    '41d350a148f8ad9bd66ed006f7a331a844543c629115f9889cc2ac13fc1ada01'],
  ['device', 3, fromHex('0500000001657869740d'),
    'fe62e0f412b0912e58f9df27a490cef0c07cd998a65648e696c798'],
  ['device', 4, utf8('{"ping":1}'),
    '7b4e55a593a42e3b4c32d30df09078a0bac313b4e484e6abef9746'],
  ['computer', 5, utf8('{"pong":1}'),
    'ec2f5bb27e4581e057190bad0f878a784bb27a602ea2fb48dfff88'],
  ['computer', 6, fromHex('04000000010000000000000002657869740d0a'),
    'a3234f8ecfd5c0b194971ad859736baa0424a58d2615c453651a1dc9b13d136c7703f826'],
  ['computer', 7, fromHex('0a000000010000000000000008010000000000'),
    '0b43bbaca3d5f7547d83f9786bcc3f8654bcee5cd24ea3d0d81011cdef20d50e0c20b8e6'],
  ['device', 5, fromHex('0900000001'),
    '8f0af745a248fc57bf0fbce834bf7f89981aef4bdf57'],
  ['device', 6, fromHex('0e0100000003001400040000'),
    '62fc4f9c74e4ced56354438c555f9b0b0eacfb2a417610c631d6c4f875'],
  ['computer', 8, fromHex('1000000003101010101010101010101010101010100000000000000000'),
    '21ef7dbe86c635f7c38222fa490b386487602ca268fc78a3756df4c878de93fbeac846e0a445cf7165a9e928fcfa'],
  ['computer', 9, fromHex('1100000003000000000000000100000000000000000000000000000000030014000400000002010000000000000000017e00010000000100000000000241244120'),
    '6f81d80771932f006673bcd19335215ef8c2b881226188c00c42c24c384023ed301909ff0239f9c33f8dccf4cad3846c' +
      'd4c4a5d562dfb53251871b21f760cf57d38ff1d0c664a2edbdb6ecb65e05b6507702'],
  ['device', 7, fromHex('12000000030000000000000001'),
    'f6cd55e93344a9850ed0fd9bc042ebbeb3d15cac3a2083a101f2086e6d73'],
  ['device', 8, fromHex('05000000036c730d'),
    '04f4607966f89d8f46f7684618eb2d777b9f8e08bc4d868f40'],
  ['computer', 10, fromHex('11000000030000000000000002000000000000000100000000000000000100140004000200020100000000000000000000030000000100000000000441244120416c41730001000200000000000b416e416f417441654173412e41744178417441204120010400010000034173417241630002000100000000000241244120'),
    '9b235ef417e258f3c40280222d3eed6decea30328a416cb62e52e1e20db2a9292dccb09333ee4dcf9470d06cff92b3f0' +
      '411fb403f73f71f26f252d7a502bfb5c5a58379640306b521575ca0bebf348f9caff734ee5a44115aed547f814f8ac56' +
      '5253da30af01f97afbc32f94f210393bf4ba71a8bbc15d4dde778c7aa651035ace8f4c8b909495e31ea5e05b8ab6f777'],
  ['computer', 11, fromHex('1100000003000000000000000300000000000000020000000000000003010014000400020002010000000000000000000000'),
    '1cae5595ac33a35427debeee677b26d6f7ec61ece1f1178e2411888fa6700db793011109bf9d78f9ecb81c73d8a18a37' +
      '4ac1fa5b6c46198bd6166fec04d8951443722a'],
  ['device', 9, fromHex('12000000030000000000000003'),
    '041e6dd56da51c2b5ba26c006466d2794fd6538653e0fc194f0be6fb1f41'],
  ['device', 10, fromHex('0900000003'),
    'eff2d60d8993bd396c8206ddfa9e0183a3a56306196f'],  ]));
});

test('docs/companion.md worked example: the fixed static keys give the documented public keys', async () => {
  assert.equal(toHex((await key(toHex(repeated(0x01)))).publicKey),
    'a4e09292b651c278b9772c569f5fa9bb13d906b46ab68c9df9dc2b4409f8a209');
  assert.equal(toHex((await key(toHex(repeated(0x02)))).publicKey),
    'ce8d3ad1ccb633ec7b70c17814a5c76ecd029685050d344745ba05870e587d59');
});
