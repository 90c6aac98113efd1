// The end-to-end channel (SecureChannel, FramedChannel) as Tests/NoiseTests/SecureChannelTests.swift
// checks its Swift twin: the handshake tells both sides who they talk to, chunking at the
// 65518-byte boundary, empty messages, any fault fatal, a refused handshake fatal, the
// initiator passing over a bounded number of an old channel's frames before the reply, and sends
// before the handshake refused without failing the channel.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SecureChannel, SecureChannelError, SecureChannelLimits } from '../js/secure-channel.js';
import { FramedChannel, FramedChannelError } from '../js/framed-channel.js';
import { CompanionProfile } from '../js/companion-profile.js';
import { generateKeyPair } from '../js/x25519.js';
import { concatBytes, utf8 } from '../js/bytes.js';
import { seededRandom } from '../test-support/support.js';

/** @typedef {import('../js/secure-channel.js').SecureChannelAction} Action */

const profile = CompanionProfile.herdrRemote;

/** @param {Action[]} actions */
const frames = (actions) => actions.flatMap((action) => (action.type === 'send' ? [action.frame] : []));
/** @param {Action[]} actions */
const delivered = (actions) => actions.flatMap((action) => (action.type === 'deliver' ? [action.message] : []));

/** A phone (initiator) and a mac (responder), their handshake done. */
async function established(pid = 'p') {
  const phoneKey = await generateKeyPair();
  const macKey = await generateKeyPair();
  const phone = new SecureChannel(CompanionProfile.initiatorHandshake(profile,
    { pid, localStatic: phoneKey, remoteStatic: macKey.publicKey }));
  const mac = new SecureChannel(CompanionProfile.responderHandshake(profile, { pid, localStatic: macKey }));
  const one = frames(await phone.start());
  const two = frames(await mac.receive(one[0]));
  const three = frames(await phone.receive(two[0]));
  await mac.receive(three[0]);
  return { phone, mac, phoneKey, macKey };
}

/**
 * The kind of the SecureChannelError `fn` throws.
 * @param {() => unknown} fn
 */
async function kind(fn) {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof SecureChannelError, String(error));
    return error.kind;
  }
  return null;
}

test('limits: 65518 application bytes a frame, the smallest frame 17 bytes', () => {
  assert.equal(SecureChannelLimits.maximumChunkLength, 65518);
  assert.equal(SecureChannelLimits.minimumFrameLength, 17);
  assert.equal(SecureChannelLimits.maximumFrameLength, 65535);
});

test('the handshake tells both sides who they talk to and the same hash', async () => {
  const { phone, mac, phoneKey, macKey } = await established();
  assert.ok(phone.isEstablished && mac.isEstablished);
  assert.deepEqual(mac.established?.remoteStaticPublicKey, phoneKey.publicKey);
  assert.deepEqual(phone.established?.remoteStaticPublicKey, macKey.publicKey);
  assert.deepEqual(phone.established?.handshakeHash, mac.established?.handshakeHash);
});

test('chunking at the boundary: 65518 bytes is one frame, one more is two; both ways, in order', async () => {
  const { phone, mac } = await established();
  const random = seededRandom(65518);
  for (const length of [0, 1, 65517, 65518, 65519, 2 * 65518, 2 * 65518 + 1, 300000]) {
    const message = random.bytes(length);
    const sent = phone.send(message);
    assert.equal(sent.length, Math.max(1, Math.ceil(length / 65518)), `${length} bytes`);
    assert.ok(sent.every((frame) => frame.length <= 65535));
    const got = [];
    for (const frame of sent) got.push(...delivered(await mac.receive(frame)));
    assert.equal(got.length, 1);
    assert.deepEqual(got[0], message);
    const back = mac.send(message).map((frame) => phone.receiveTransport(frame)).filter((m) => m !== null);
    assert.deepEqual(back, [message]);
  }
  const full = phone.sendFrame(new Uint8Array(65518));
  assert.equal(full.length, 65535);
  assert.deepEqual(delivered(await mac.receive(full)), [new Uint8Array(65518)]);
  assert.equal(await kind(() => phone.sendFrame(new Uint8Array(65519))), 'messageTooLarge');
  assert.ok(phone.isEstablished, 'a message too long for one frame is refused before anything is encrypted');
  assert.deepEqual(delivered(await mac.receive(phone.sendFrame(new Uint8Array(0)))), [new Uint8Array(0)], 'an empty message is one');
});

test('any fault ends the channel: tampered, replayed, reordered, truncated, a bad flag, too large', async () => {
  /** @type {[string, (frames: Uint8Array[]) => Uint8Array[], string][]} */
  const faults = [
    ['tampered', ([a]) => [Uint8Array.from(a, (byte, i) => (i === 3 ? byte ^ 1 : byte))], 'decryptionFailed'],
    ['replayed', ([a]) => [a, a], 'decryptionFailed'],
    ['reordered', ([a, b]) => [b, a], 'decryptionFailed'],
    ['truncated', ([a]) => [a.subarray(0, 10)], 'decryptionFailed'],
    ['too long', () => [new Uint8Array(65536)], 'frameTooLong'],
  ];
  for (const [name, fault, expected] of faults) {
    const { phone, mac } = await established();
    const sent = [phone.sendFrame(utf8('one')), phone.sendFrame(utf8('two'))];
    let failure = null;
    for (const frame of fault(sent)) {
      failure = await kind(() => mac.receive(frame));
      if (failure !== null) break;
    }
    assert.equal(failure, expected, name);
    assert.equal(mac.failure?.kind, expected);
    assert.equal(await kind(() => mac.receive(sent[0])), expected, `${name}: every later call fails the same`);
    assert.equal(await kind(() => mac.send(utf8('x'))), expected);
  }
});

test('malformed chunks end the channel: no flag byte, a flag of 2, a chunked message over the limit', async () => {
  /**
   * A raw initiator (HandshakeState) against a channel responder of `limit`: the raw side's
   * send cipher can encrypt any plaintext, a malformed chunk among them.
   * @param {number} [limit]
   */
  async function rawAgainstChannel(limit) {
    const macKey = await generateKeyPair();
    const raw = CompanionProfile.initiatorHandshake(profile, { pid: 'm', localStatic: await generateKeyPair(), remoteStatic: macKey.publicKey });
    const mac = new SecureChannel(CompanionProfile.responderHandshake(profile, { pid: 'm', localStatic: macKey }), limit);
    const reply = frames(await mac.receive(await raw.writeMessage()))[0];
    await raw.readMessage(reply);
    await mac.receive(await raw.writeMessage());
    return { send: raw.transportCipherStates().send, mac };
  }
  const empty = new Uint8Array(0);
  for (const [plaintext, expected] of /** @type {[Uint8Array, string][]} */ ([
    [empty, 'invalidChunk'], [Uint8Array.of(2, 0x61), 'invalidChunk'], [Uint8Array.of(0xff), 'invalidChunk'],
  ])) {
    const { send, mac } = await rawAgainstChannel();
    assert.equal(await kind(() => mac.receive(send.encryptWithAd(empty, plaintext))), expected);
    assert.equal(mac.failure?.kind, expected);
  }
  const { send, mac } = await rawAgainstChannel(100);
  assert.deepEqual(delivered(await mac.receive(send.encryptWithAd(empty, concatBytes(Uint8Array.of(0), new Uint8Array(150))))),
    [new Uint8Array(150)], 'one frame is never over the limit: the limit bounds what is put together');
  assert.deepEqual(await mac.receive(send.encryptWithAd(empty, concatBytes(Uint8Array.of(1), new Uint8Array(60)))), []);
  assert.equal(await kind(() => mac.receive(send.encryptWithAd(empty, concatBytes(Uint8Array.of(0), new Uint8Array(41))))),
    'messageTooLarge');
});

test('a refused handshake is fatal; a frame when this side must write is refused', async () => {
  const phoneKey = await generateKeyPair();
  const macKey = await generateKeyPair();
  const phone = new SecureChannel(CompanionProfile.initiatorHandshake(profile, { pid: 'a', localStatic: phoneKey, remoteStatic: macKey.publicKey }));
  const mac = new SecureChannel(CompanionProfile.responderHandshake(profile, { pid: 'b', localStatic: macKey }));
  const first = frames(await phone.start())[0];
  assert.equal(await kind(() => mac.receive(first)), 'handshakeFailed', 'another pid: another prologue');
  assert.equal(await kind(() => mac.receive(first)), 'handshakeFailed');
  const phone2 = new SecureChannel(CompanionProfile.initiatorHandshake(profile, { pid: 'x', localStatic: phoneKey, remoteStatic: macKey.publicKey }));
  assert.equal(await kind(() => phone2.receive(first)), 'handshakeFailed');
  const phone3 = new SecureChannel(CompanionProfile.initiatorHandshake(profile, { pid: 'x', localStatic: phoneKey, remoteStatic: macKey.publicKey }));
  await phone3.start();
  assert.equal(await kind(() => phone3.receive(new Uint8Array(65536))), 'frameTooLong');
});

test("the initiator passes over an old channel's frames and a forged reply before the real one", async () => {
  const old = await established();
  const stale = [Uint8Array.of(1, 2, 3), new Uint8Array(5000).fill(7), new Uint8Array(0)].map((m) => old.mac.sendFrame(m));
  const phoneKey = await generateKeyPair();
  const macKey = await generateKeyPair();
  const phone = new SecureChannel(CompanionProfile.initiatorHandshake(profile, { pid: 't', localStatic: phoneKey, remoteStatic: macKey.publicKey }));
  const mac = new SecureChannel(CompanionProfile.responderHandshake(profile, { pid: 't', localStatic: macKey }));
  const first = frames(await phone.start())[0];
  const reply = frames(await mac.receive(first))[0];
  for (const frame of [...stale, seededRandom(1).bytes(reply.length)]) assert.deepEqual(await phone.receive(frame), []);
  assert.equal(phone.staleFrames, 4);
  const third = frames(await phone.receive(reply));
  assert.ok(phone.isEstablished);
  await mac.receive(third[0]);
  assert.ok(mac.isEstablished);
  assert.deepEqual(delivered(await mac.receive(phone.sendFrame(utf8('after')))), [utf8('after')]);
});

test('the initiator passes over a bounded number of frames (and bytes); the responder none', async () => {
  const macKey = await generateKeyPair();
  const phone = new SecureChannel(CompanionProfile.initiatorHandshake(profile, { pid: 't', localStatic: await generateKeyPair(), remoteStatic: macKey.publicKey }));
  await phone.start();
  const garbage = new Uint8Array(48).fill(9);
  for (let i = 0; i < SecureChannelLimits.maximumStaleFrames; i++) await phone.receive(garbage);
  assert.equal(await kind(() => phone.receive(garbage)), 'handshakeFailed');
  assert.ok(phone.failure !== null);
  const big = new SecureChannel(CompanionProfile.initiatorHandshake(profile, { pid: 't', localStatic: await generateKeyPair(), remoteStatic: macKey.publicKey }));
  await big.start();
  const frame = new Uint8Array(SecureChannelLimits.maximumFrameLength).fill(9);
  const fit = Math.floor(SecureChannelLimits.maximumStaleBytes / frame.length);
  for (let i = 0; i < fit; i++) await big.receive(frame);
  assert.equal(await kind(() => big.receive(frame)), 'handshakeFailed', 'past the bytes bound');
  const mac = new SecureChannel(CompanionProfile.responderHandshake(profile, { pid: 't', localStatic: macKey }));
  assert.equal(await kind(() => mac.receive(garbage)), 'handshakeFailed', 'the responder passes over nothing');
});

test('sending before the handshake is refused but not fatal; overlapping handshake calls are refused', async () => {
  const macKey = await generateKeyPair();
  const phone = new SecureChannel(CompanionProfile.initiatorHandshake(profile, { pid: 't', localStatic: await generateKeyPair(), remoteStatic: macKey.publicKey }));
  assert.equal(await kind(() => phone.send(utf8('early'))), 'notEstablished');
  assert.equal(phone.failure, null);
  const starting = phone.start();
  assert.equal(await kind(() => phone.start()), 'busy');
  assert.equal((await starting).length, 1);
  assert.equal(phone.failure, null);
});

test('FramedChannel: frames go to the pipe; a failing pipe or channel is a FramedChannelError of its kind', async () => {
  const phoneKey = await generateKeyPair();
  const macKey = await generateKeyPair();
  /** @type {Uint8Array[]} */
  const toMac = [];
  /** @type {Uint8Array[]} */
  const toPhone = [];
  const phone = new FramedChannel({ send: (frame) => toMac.push(frame) },
    CompanionProfile.initiatorHandshake(profile, { pid: 'f', localStatic: phoneKey, remoteStatic: macKey.publicKey }));
  const mac = new FramedChannel({ send: (frame) => toPhone.push(frame) },
    CompanionProfile.responderHandshake(profile, { pid: 'f', localStatic: macKey }));
  assert.deepEqual(await phone.start(), []);
  assert.deepEqual(await mac.receive(/** @type {Uint8Array} */ (toMac.shift())), []);
  const up = await phone.receive(/** @type {Uint8Array} */ (toPhone.shift()));
  assert.equal(up[0].type, 'established');
  assert.equal((await mac.receive(/** @type {Uint8Array} */ (toMac.shift())))[0].type, 'established');
  phone.send(new Uint8Array(70000).fill(3));
  assert.equal(toMac.length, 2);
  assert.equal(await mac.receive(toMac[0]).then((outputs) => outputs.length), 0);
  assert.deepEqual(mac.receiveTransport(toMac[1]), new Uint8Array(70000).fill(3));
  const broken = new FramedChannel({ send: () => { throw new Error('closed'); } },
    CompanionProfile.initiatorHandshake(profile, { pid: 'f', localStatic: phoneKey, remoteStatic: macKey.publicKey }));
  await assert.rejects(broken.start(), (error) => error instanceof FramedChannelError && error.kind === 'send');
  assert.throws(() => mac.receiveTransport(new Uint8Array(20)), (error) => error instanceof FramedChannelError && error.kind === 'channel');
});
