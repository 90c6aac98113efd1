// docs/companion.md's worked example from the device's side: the web client's own shells
// (DevicePairingRunner, DeviceConnection) with the example's fixed keys, against herdr-host's
// side played in JS (test-support/simulated-computer.js) through the in-memory relay giving the
// example's challenges and tokens. The pairing and the session of bytes are reproduced byte for
// byte: each admission frame, each handshake message, every frame either side sends, in order,
// the 6-digit code shown and the /register body. The screen session was written by hand on one
// channel after the session of bytes; the device's machine opens a screen session on a
// connection of its own, so there its messages are compared (the stream apart), and the two
// messages the machine adds to the example's are named.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workedExample } from '../test-support/worked-example.js';
import { FakeRelay } from '../test-support/fake-relay.js';
import { FakeClock, until, untilAdvancing } from '../test-support/fake-clock.js';
import { SimulatedComputer } from '../test-support/simulated-computer.js';
import { DevicePairingRunner } from '../js/device-pairing-runner.js';
import { DeviceConnection } from '../js/device-connection.js';
import { CompanionCode } from '../js/companion-code.js';
import { RelayJoinKey } from '../js/relay-join.js';
import { ChannelMessage } from '../js/channel-message.js';
import { SessionMessage } from '../js/session-message.js';
import { importPrivateKeyInsecureForTestsOnly } from '../js/x25519.js';
import { toHex, utf8 } from '../js/bytes.js';

const CODE = 'herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs=pOCSkrZRwni5dyxWn1-puxPZBrRqtoyd-dwrRAn4ogk' +
  '&pid=BwcHBwcHBwcHBwcHBwcHBw&relay=https:%2F%2Frelay.example.com&n=studio&home=%5Bfd00::7%5D:4610&x=1798761720';
const NOW = 1798761600;

/** @param {number} byte @param {number} [count] */
const repeated = (byte, count = 32) => new Uint8Array(count).fill(byte);
/** @param {number} byte */
const fixedKey = (byte) => importPrivateKeyInsecureForTestsOnly(repeated(byte));

/**
 * The relay of one part of the example: its challenges and its registration token.
 * @param {number} mac @param {number} phone @param {number} token
 */
const relayOf = (mac, phone, token) => new FakeRelay({ nonce: (role) => repeated(role === 'mac' ? mac : phone), token: () => repeated(token, 24) });

/**
 * Each side's frames through the relay, in order: what the example shows of the handshake and
 * of every message's frame.
 * @param {FakeRelay} relay
 */
function framesBy(relay) {
  return {
    device: relay.spliced.filter((frame) => frame.from === 'phone').map((frame) => toHex(frame.bytes)),
    computer: relay.spliced.filter((frame) => frame.from === 'mac').map((frame) => toHex(frame.bytes)),
  };
}

/** @param {ReturnType<typeof workedExample>['pairing']} part */
function documentedFrames(part) {
  /** @param {string} direction */
  const of = (direction) => part.messages.filter((message) => message.direction === direction)
    .map((message) => toHex(/** @type {Uint8Array} */ (message.frame)));
  return {
    device: [toHex(part.handshake[0]), toHex(part.handshake[2]), ...of('device → computer')],
    computer: [toHex(part.handshake[1]), ...of('computer → device')],
  };
}

test("docs/companion.md's worked example, one pairing, from the device's side: every frame, the code, /register", async () => {
  const documented = workedExample().pairing;
  const clock = new FakeClock(1000, NOW);
  const relay = relayOf(0x09, 0x0a, 0x0c);
  const code = CompanionCode.parse(CODE, NOW);
  const computer = new SimulatedComputer({
    relay, clock, staticKey: await fixedKey(0x01), pid: code.pidText, room: code.room, mode: 'pairing', home: ['[fd00::7]:4610'],
    ephemeral: () => fixedKey(0x04),
  });
  computer.park();
  await until(() => computer.parks === 1, 'the computer parks');
  /** @type {string[]} */
  const shown = [];
  const runner = new DevicePairingRunner({
    code, deviceName: 'phone', staticKey: await fixedKey(0x02), openSocket: relay.openSocket, http: relay.http, clock,
    console: { showCode: (_, text) => shown.push(text), blankCode() {}, say() {} },
    keep: async () => {}, forget: async () => {}, randomBytes: (count) => repeated(0x08, count),
    ephemeralForTestsOnly: () => fixedKey(0x03),
  });
  const result = runner.run();
  await until(() => shown.length === 1 && computer.code !== null, 'the code');
  assert.deepEqual(shown, ['Type this code on studio: 138 557']);
  assert.ok(computer.typeCode('138 557'));
  assert.deepEqual(await result, { type: 'paired', roomSecret: repeated(0x08), established: true });
  await until(() => computer.pairing === 'registered', 'the computer hears {"registered":true}');

  assert.deepEqual(relay.admissions.map((admission) => admission.texts), [documented.admissions.mac, documented.admissions.phone]);
  assert.deepEqual(framesBy(relay), documentedFrames(documented));
  assert.deepEqual(relay.registrations, [documented.register]);
});

test("docs/companion.md's worked example, one session, from the device's side: every frame of either side, in order", async () => {
  const documented = workedExample().session;
  const clock = new FakeClock(1000, NOW);
  const relay = relayOf(0x0d, 0x0e, 0x0f);
  const code = CompanionCode.parse(CODE, NOW);
  const roomSecret = repeated(0x08);
  relay.room(code.room).verifier = (await RelayJoinKey.fromRoomSecret(roomSecret)).verifier;
  const deviceKey = await fixedKey(0x02);
  const computer = new SimulatedComputer({
    relay, clock, staticKey: await fixedKey(0x01), pid: code.pidText, room: code.room, mode: 'run', deviceKey: deviceKey.publicKey,
    roomSecret, home: ['[fd00::7]:4610'], ephemeral: () => fixedKey(0x06), tokens: [repeated(0x0b, 16)],
  });
  computer.park();
  await until(() => computer.parks === 1, 'the computer parks');
  /** @type {string[]} */
  const events = [];
  /** @type {number[]} */
  const output = [];
  const device = new DeviceConnection({
    settings: { attach: { type: 'session', name: null }, cols: 80, rows: 24 },
    pairing: { relay: /** @type {NonNullable<typeof code.relay>} */ (code.relay), room: code.room, computerKey: code.staticPublicKey,
      pairingID: code.pidText, roomSecret, registered: true },
    deviceName: 'phone', staticKey: deviceKey, openSocket: relay.openSocket, http: relay.http, clock,
    onEvent: (event) => events.push(event.type), onOutput: (bytes) => output.push(...bytes) > 0,
    ephemeralForTestsOnly: () => fixedKey(0x05),
  });
  device.start();
  /** @param {string} name */
  const heard = (name) => computer.received.some((message) => (message.type === 'agents' ? 'agents' : message.message.type) === name);
  await untilAdvancing(clock, () => heard('window'), 'the session starts and the device sizes its window');
  computer.sendSession({ type: 'output', stream: 1, offset: 0n, data: utf8('$ ') });
  await until(() => output.length === 2, 'the prompt');
  device.send(utf8('exit\r'));
  await untilAdvancing(clock, () => heard('ping'), 'the keys, and a ping covering them');
  await until(() => relay.spliced.length === documented.handshake.length + 11, 'the pong');
  computer.sendSession({ type: 'output', stream: 1, offset: 2n, data: utf8('exit\r\n') });
  computer.sendSession({ type: 'exit', stream: 1, end: 8n, status: 0, signal: null });
  await until(() => device.isFinished && heard('close'), 'the exit, answered with close');
  assert.deepEqual(events, ['connected', 'homeAddresses', 'started', 'finished']);
  assert.equal(new TextDecoder().decode(Uint8Array.from(output)), '$ exit\r\n');

  assert.deepEqual(relay.admissions.map((admission) => admission.texts), [documented.admissions.mac, documented.admissions.phone]);
  assert.deepEqual(framesBy(relay), documentedFrames(documented));
});

test("docs/companion.md's worked example, one screen session: the device's messages, in order, on a connection of its own", async () => {
  const documented = workedExample().screen;
  const clock = new FakeClock(1000, NOW);
  const relay = new FakeRelay();
  const code = CompanionCode.parse(CODE, NOW);
  const roomSecret = repeated(0x08);
  relay.room(code.room).verifier = (await RelayJoinKey.fromRoomSecret(roomSecret)).verifier;
  const deviceKey = await fixedKey(0x02);
  const computer = new SimulatedComputer({
    relay, clock, staticKey: await fixedKey(0x01), pid: code.pidText, room: code.room, mode: 'run', deviceKey: deviceKey.publicKey, roomSecret,
  });
  /**
   * The example's messages from the computer, on the stream the device opened here.
   * @param {number} index
   * @param {number} stream
   */
  const fromComputer = (index, stream) => {
    const message = SessionMessage.parse(documented.messages.filter((entry) => entry.direction === 'computer → device')[index].message);
    return message.type === 'screen' ? { ...message, update: { ...message.update, stream } } : { ...message, stream };
  };
  computer.onSession = (message, host) => {
    if (message.type === 'openScreen') {
      host.sendSession(/** @type {any} */ (fromComputer(0, message.stream)));
      host.sendSession(/** @type {any} */ (fromComputer(1, message.stream)));
      return true;
    }
    if (message.type === 'input') {
      host.sendSession(/** @type {any} */ (fromComputer(2, message.stream)));
      clock.setTimer(0.05, () => host.sendSession(/** @type {any} */ (fromComputer(3, message.stream))));
    }
    return false;
  };
  computer.park();
  await until(() => computer.parks === 1, 'the computer parks');
  /** @type {import('../js/device-session.js').ScreenFrame[]} */
  const screens = [];
  const device = new DeviceConnection({
    settings: { attach: { type: 'session', name: null }, cols: 20, rows: 4, screen: true },
    pairing: { relay: /** @type {NonNullable<typeof code.relay>} */ (code.relay), room: code.room, computerKey: code.staticPublicKey,
      pairingID: code.pidText, roomSecret, registered: true },
    deviceName: 'phone', staticKey: deviceKey, openSocket: relay.openSocket, http: relay.http, clock,
    onScreen: (frame) => screens.push(frame) > 0,
  });
  device.start();
  await untilAdvancing(clock, () => screens.length === 1, 'the first screen');
  await clock.advance(0.2);
  device.send(utf8('ls\r'));
  await untilAdvancing(clock, () => screens.length === 3, 'the listing, then the state confirming the keys');
  await clock.advance(0.1);
  device.cancel();
  await until(() => device.isFinished && computer.received.some((message) => message.type === 'session' && message.message.type === 'close'),
    'closed');

  /** The device's session messages as bytes, on stream 3 as in the example. */
  const sent = computer.received.filter((message) => message.type === 'session' || (message.type === 'control' && message.message.type === 'ping'))
    .map((message) => {
      if (message.type !== 'session') return { text: toHex(ChannelMessage.encode(message)), ping: true };
      const session = message.message;
      const restreamed = session.type === 'screen' || session.type === 'scrollback' ? session : { ...session, stream: 3 };
      return { text: toHex(SessionMessage.encode(/** @type {any} */ (restreamed))), ping: false };
    });
  const expected = documented.messages.filter((entry) => entry.direction === 'device → computer').map((entry) => toHex(entry.message));
  // The machine's messages are the example's and two more: the ping that covers the keystrokes
  // ("Liveness": within 0.25 s of every session message it sends), and the acknowledgement of
  // state 2, which it sends as soon as that state is applied, 50 ms before state 3 comes.
  const ackOfState2 = toHex(SessionMessage.encode({ type: 'screenAck', stream: 3, state: 2n }));
  assert.deepEqual(sent.filter((entry) => !entry.ping && entry.text !== ackOfState2).map((entry) => entry.text), expected);
  assert.deepEqual(sent.map((entry) => (entry.ping ? 'ping' : entry.text === ackOfState2 ? 'ack 2' : 'example')),
    ['example', 'example', 'example', 'ping', 'ack 2', 'example', 'example']);
  assert.equal(screens[2].state, 3n);
  assert.equal(screens[2].inputBytes, 3n, 'the last state confirms the three bytes typed');
});
