// Pairing end to end in memory: the device's DevicePairingRunner against herdr-host's side played
// by test-support/simulated-computer.js through the in-memory relay (test-support/fake-relay.js):
// both sides derive the same 6-digit code, the person types it, the room secret is kept before
// it is sent, the computer stores it and acknowledges, the device registers V with the relay and
// says so; and what happens when the connection drops, the computer rejects, or another device
// takes this one's place.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DevicePairingRunner } from '../js/device-pairing-runner.js';
import { CompanionCode } from '../js/companion-code.js';
import { RelayEndpoint } from '../js/relay-endpoint.js';
import { RelayJoinKey } from '../js/relay-join.js';
import { HomeAddress } from '../js/home-address.js';
import { MemoryKeyStore } from '../js/key-store.js';
import { generateKeyPair } from '../js/x25519.js';
import { FakeRelay } from '../test-support/fake-relay.js';
import { FakeClock, until, untilAdvancing } from '../test-support/fake-clock.js';
import { SimulatedComputer } from '../test-support/simulated-computer.js';

/** A computer showing a code, parked in its pairing room; a device with its key store. */
async function world() {
  const clock = new FakeClock();
  const relay = new FakeRelay();
  const computerKey = await generateKeyPair();
  const code = CompanionCode.make({
    staticPublicKey: computerKey.publicKey, pairingID: crypto.getRandomValues(new Uint8Array(16)).map((b, i) => (i === 0 ? b & 0x7f : b)),
    relay: RelayEndpoint.parse(relay.origin), computerName: 'studio', home: [HomeAddress.parse('[fd00::7]:4610')],
  });
  const computer = new SimulatedComputer({
    relay, clock, staticKey: computerKey, pid: code.pidText, room: code.room, mode: 'pairing', home: ['[fd00::7]:4610', '169.254.3.1:4610'],
  });
  computer.park();
  await until(() => computer.parks === 1, 'the computer parks');
  const store = new MemoryKeyStore();
  const deviceKey = await store.deviceKey();
  /** @type {{type: string, text: string, code?: string}[]} */
  const said = [];
  const runner = new DevicePairingRunner({
    code, deviceName: 'phone', staticKey: deviceKey, openSocket: relay.openSocket, http: relay.http, clock,
    console: {
      showCode: (shown, text) => said.push({ type: 'showCode', code: shown, text }),
      blankCode: (reason) => said.push({ type: 'blankCode', text: reason }),
      say: (text) => said.push({ type: 'say', text }),
    },
    keep: async (roomSecret, registered, home) => store.savePairing({
      id: code.room, name: 'studio', relay: relay.origin, computerKey: code.staticPublicKey, pairingID: code.pidText, roomSecret,
      joinKey: null, registered, deviceName: 'phone', session: code.session, home: home.map(HomeAddress.text), pairedAt: clock.unixTime(),
      relayLastWorked: null,
    }),
    forget: () => store.removePairing(code.room),
  });
  return { clock, relay, computer, code, store, deviceKey, said, runner };
}

/** @param {{type: string, text: string, code?: string}[]} said */
const codes = (said) => said.flatMap((entry) => (entry.type === 'showCode' ? [/** @type {string} */ (entry.code)] : []));

test('pairing end to end: the same 6-digit code on both sides, the secret kept, the room registered, the keys stored', async () => {
  const { computer, code, store, deviceKey, said, runner, relay } = await world();
  const result = runner.run();
  await until(() => codes(said).length === 1 && computer.code !== null, 'the device shows a code, the computer asks for it');
  const shown = codes(said)[0];
  assert.match(shown, /^[0-9]{6}$/);
  assert.equal(shown, computer.code, 'both sides derive the same code from the handshake');
  assert.equal(said.find((entry) => entry.type === 'showCode')?.text, `Type this code on studio: ${shown.slice(0, 3)} ${shown.slice(3)}`);
  assert.ok(computer.typeCode(`${shown.slice(0, 3)} ${shown.slice(3)}`), 'the person types it on the computer');
  const outcome = await result;
  assert.equal(outcome.type, 'paired');
  assert.ok(outcome.type === 'paired' && outcome.established);
  assert.deepEqual(said.filter((entry) => entry.type === 'blankCode').map((entry) => entry.text), ['The computer accepted the code.']);
  // The computer pinned this device and holds the same secret; the relay holds its verifier.
  assert.deepEqual(computer.deviceKey, deviceKey.publicKey);
  const record = await store.pairing(code.room);
  assert.ok(record !== null);
  assert.deepEqual(record.roomSecret, computer.roomSecret);
  assert.equal(record.registered, true);
  assert.deepEqual(record.home, ['[fd00::7]:4610', '169.254.3.1:4610'], 'where the computer said its door is');
  const key = await RelayJoinKey.fromRoomSecret(record.roomSecret);
  assert.deepEqual(relay.room(code.room).verifier, key.verifier);
  assert.equal(computer.pairing, 'registered', 'the computer heard {"registered":true}');
  assert.deepEqual(computer.received.map((message) => message.type === 'control' ? message.message.type : message.type), ['status', 'registered']);
  const status = computer.received[0];
  assert.ok(status.type === 'control' && status.message.type === 'status' && !status.message.status.registered && status.message.status.name === 'phone');
  assert.equal(relay.admissions[1].texts[2], '{}', 'the device joined the pairing room with {}');
});

test('a connection that drops while the code shows voids it: blanked, a new handshake, a new code', async () => {
  const { computer, said, runner, relay, code, clock } = await world();
  const other = () => clock;
  const result = runner.run();
  await until(() => codes(said).length === 1, 'a first code');
  const first = codes(said)[0];
  const phone = /** @type {import('../js/frame-pipe.js').RelaySocket} */ (relay.holder(code.room, 'phone'));
  relay.closeSocket(phone, { code: 1011, reason: 'internal error' });
  await untilAdvancing(other(), () => codes(said).length === 2 && computer.code !== null, 'a second code after the drop');
  const blanked = said.find((entry) => entry.type === 'blankCode');
  assert.match(blanked?.text ?? '', /The connection dropped \(.*\); that code is void/);
  assert.ok(!computer.typeCode(first), 'the first code is dead on the computer too');
  assert.ok(computer.typeCode(codes(said)[1]));
  assert.equal((await result).type, 'paired');
});

test('the computer rejecting the code ends it and keeps nothing; cancelling does too', async () => {
  const { computer, said, runner, store, code } = await world();
  const result = runner.run();
  await until(() => codes(said).length === 1 && computer.code !== null, 'a code');
  computer.send({ type: 'control', message: { type: 'pairing', accepted: false } });
  assert.deepEqual(await result, { type: 'rejected' });
  assert.equal(await store.pairing(code.room), null);

  const other = await world();
  const cancelled = other.runner.run();
  await until(() => codes(other.said).length === 1, 'a code');
  other.runner.cancel();
  assert.deepEqual(await cancelled, { type: 'cancelled' });
  assert.match(other.said.at(-1)?.text ?? '', /Cancelled; nothing was paired/);
});

test('another device taking the room stops the pairing and says so; the time limit ends a silent one', async () => {
  const { said, runner, relay, code } = await world();
  const result = runner.run();
  await until(() => codes(said).length === 1, 'a code');
  // Another phone joins the pairing room with the same code: this one is displaced.
  const intruder = relay.openSocket(`wss://relay.example.com/?room=${code.room}`);
  intruder.listen(() => {});
  intruder.sendText('{"v":1,"role":"phone"}');
  await until(() => relay.admissions.length === 3, 'the intruder says hello');
  intruder.sendText('{}');
  assert.deepEqual(await result, { type: 'cancelled' });
  assert.ok(said.some((entry) => /Another device joined this pairing's room/.test(entry.text)));

  const quiet = await world();
  quiet.computer.stop();
  const late = quiet.runner.run();
  await until(() => quiet.said.length > 0, 'the device says the computer is not there');
  assert.match(quiet.said[0].text, /not in the pairing room yet/);
  await quiet.clock.advance(181);
  assert.deepEqual(await late, { type: 'timedOut' });
  assert.match(quiet.said.at(-1)?.text ?? '', /did not confirm the code in time/);
});

test('a code for the home network alone is refused before anything: a browser cannot take the home road', async () => {
  const { code, relay, clock, deviceKey } = await world();
  const homeOnly = CompanionCode.make({ ...code, relay: null });
  assert.throws(() => new DevicePairingRunner({
    code: homeOnly, deviceName: 'phone', staticKey: deviceKey, openSocket: relay.openSocket, http: relay.http, clock,
    console: { showCode() {}, blankCode() {}, say() {} }, keep: async () => {}, forget: async () => {},
  }), /a browser cannot reach/);
});
