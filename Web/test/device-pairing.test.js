// The device's pairing machine alone, with a fake clock, as DevicePairingTests checks the Swift
// twin: the code shown and registered only after the ack, blanked the moment the connection
// drops, a reconnect after the accept showing no code, rejection, the 180 s limit, a taken room.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DevicePairing } from '../js/device-pairing.js';
import { CompanionProfile } from '../js/companion-profile.js';
import { CompanionCode } from '../js/companion-code.js';
import { toBase64Url } from '../js/bytes.js';

/** @typedef {import('../js/device-pairing.js').DevicePairingAction} Action */

const START = 1_800_000_000;
const HASH = new Uint8Array(32).fill(7);
const TOKEN = new Uint8Array(24).fill(0x70);
const SECRET = new Uint8Array(32).fill(0x5e);
const STATUS = /** @type {const} */ ({ type: 'status', status: { name: 'phone', roomSecret: SECRET, registered: false } });

function machine() {
  const m = new DevicePairing('phone', { random: (count) => new Uint8Array(count).fill(0x5e) });
  m.handle({ type: 'start', now: START });
  return m;
}

/** @param {DevicePairing} m */
function established(m) {
  m.handle({ type: 'admitted', registrationToken: TOKEN });
  return m.handle({ type: 'established', handshakeHash: HASH, now: START });
}

test('the device shows the code, keeps the secret before sending it, and registers only after the ack', () => {
  const m = machine();
  const code = CompanionProfile.sas(CompanionProfile.herdrRemote, HASH);
  assert.deepEqual(established(m), [{ type: 'showCode', code }]);
  const accepted = m.handle({ type: 'message', message: { type: 'pairing', accepted: true }, now: START });
  assert.deepEqual(accepted, [
    { type: 'blankCode', reason: 'The computer accepted the code.' }, { type: 'store', roomSecret: SECRET, registered: false },
    { type: 'send', message: STATUS },
  ], 'the secret is kept before it is sent');
  assert.equal(m.nextWake, START + 180);
  assert.deepEqual(m.handle({ type: 'message', message: { type: 'statusAcknowledged' }, now: START }),
    [{ type: 'register', registrationToken: TOKEN, roomSecret: SECRET }]);
  assert.equal(m.nextWake, null, 'no time limit while /register is under way');
  assert.deepEqual(m.handle({ type: 'tick', now: START + 500 }), []);
  assert.deepEqual(m.handle({ type: 'registration', failure: null, alreadyRegistered: false }), [
    { type: 'send', message: { type: 'registered' } }, { type: 'store', roomSecret: SECRET, registered: true },
    { type: 'finished', outcome: { type: 'paired', roomSecret: SECRET, established: true } },
  ]);
  assert.ok(m.isFinished);
  assert.deepEqual(m.handle({ type: 'cancel' }), [], 'nothing after the end');
  assert.equal(DevicePairing.codeText('138557'), '138 557');
});

test('the code is blanked the moment the connection drops; the next handshake shows its own', () => {
  const m = machine();
  established(m);
  const dropped = m.handle({ type: 'connectionEnded', reason: 'peer gone', now: START });
  assert.equal(dropped[0].type, 'blankCode');
  assert.match(/** @type {{reason: string}} */ (dropped[0]).reason, /peer gone.*void/);
  assert.deepEqual(dropped[1], { type: 'reconnect' });
  const other = new Uint8Array(32).fill(9);
  assert.deepEqual(m.handle({ type: 'established', handshakeHash: other, now: START }), [], 'no code without an admission');
  m.handle({ type: 'admitted', registrationToken: TOKEN });
  assert.deepEqual(m.handle({ type: 'established', handshakeHash: other, now: START }),
    [{ type: 'showCode', code: CompanionProfile.sas(CompanionProfile.herdrRemote, other) }]);
});

test('a reconnect after the accept shows no code and sends the status again', () => {
  const m = machine();
  established(m);
  m.handle({ type: 'message', message: { type: 'pairing', accepted: true }, now: START });
  assert.deepEqual(m.handle({ type: 'connectionEnded', reason: 'peer gone', now: START }), []);
  assert.deepEqual(established(m), [{ type: 'send', message: STATUS }]);
  assert.deepEqual(m.handle({ type: 'message', message: { type: 'statusAcknowledged' }, now: START }),
    [{ type: 'register', registrationToken: TOKEN, roomSecret: SECRET }], 'registered with the new connection token');
});

test('rejection, the time limit, a taken room and a failed registration end it', () => {
  const rejected = machine();
  established(rejected);
  assert.deepEqual(rejected.handle({ type: 'message', message: { type: 'pairing', accepted: false }, now: START }), [
    { type: 'blankCode', reason: 'The computer rejected the pairing; nothing was paired.' }, { type: 'finished', outcome: { type: 'rejected' } },
  ]);

  const late = machine();
  established(late);
  assert.deepEqual(late.handle({ type: 'tick', now: START + 179.999 }), []);
  const timedOut = late.handle({ type: 'tick', now: START + 180 });
  assert.equal(timedOut[0].type, 'blankCode', 'the code does not stay on screen after the time limit');
  assert.deepEqual(timedOut.at(-1), { type: 'finished', outcome: { type: 'timedOut' } });

  const silent = machine();
  assert.deepEqual(silent.handle({ type: 'tick', now: START + 180 }), [
    { type: 'say', text: 'The computer did not confirm the code in time; nothing was paired.' },
    { type: 'finished', outcome: { type: 'timedOut' } },
  ]);

  const taken = machine();
  established(taken);
  taken.handle({ type: 'message', message: { type: 'pairing', accepted: true }, now: START });
  taken.handle({ type: 'message', message: { type: 'statusAcknowledged' }, now: START });
  assert.deepEqual(taken.handle({ type: 'registration', failure: '403 already registered', alreadyRegistered: true }).at(-1),
    { type: 'finished', outcome: { type: 'roomTaken' } });

  const unregistered = machine();
  established(unregistered);
  unregistered.handle({ type: 'message', message: { type: 'pairing', accepted: true }, now: START });
  unregistered.handle({ type: 'message', message: { type: 'statusAcknowledged' }, now: START });
  const kept = unregistered.handle({ type: 'registration', failure: 'relay unreachable', alreadyRegistered: false });
  assert.match(/** @type {{text: string}} */ (kept[0]).text, /registered at the next connection/);
  assert.deepEqual(kept.at(-1), { type: 'finished', outcome: { type: 'paired', roomSecret: SECRET, established: false } });

  const cancelled = machine();
  established(cancelled);
  assert.deepEqual(cancelled.handle({ type: 'cancel' }), [
    { type: 'blankCode', reason: 'Cancelled; nothing was paired.' }, { type: 'finished', outcome: { type: 'cancelled' } },
  ]);
});

test('messages of the wrong turn are ignored: an accept before a handshake, an ack before the accept', () => {
  const m = machine();
  assert.deepEqual(m.handle({ type: 'message', message: { type: 'pairing', accepted: true }, now: START }), []);
  established(m);
  assert.deepEqual(m.handle({ type: 'message', message: { type: 'statusAcknowledged' }, now: START }), []);
  assert.deepEqual(m.handle({ type: 'registration', failure: null, alreadyRegistered: false }), []);
  const idle = new DevicePairing('phone');
  assert.deepEqual(idle.handle({ type: 'admitted', registrationToken: TOKEN }), [], 'nothing before start');
  assert.equal(idle.nextWake, null);
});

test('a browser pairs through a relay only: a code of the home network alone is refused in words', () => {
  const base = {
    staticPublicKey: new Uint8Array(32).fill(1), pairingID: new Uint8Array(16).fill(2), computerName: 'studio',
  };
  const homeOnly = CompanionCode.parse(`herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs=${toBase64Url(base.staticPublicKey)}` +
    `&pid=${toBase64Url(base.pairingID)}&n=studio&home=169.254.3.1:4610`, START);
  assert.throws(() => DevicePairing.relayOf(homeOnly), /home network alone.*a browser cannot reach.*herdr-host pair --relay/);
});
