// One attempt through the relay against a socket played by the test: every way the admission
// and the greeting can fail, and what each failure means (RoadFailure, in words); the relay's
// answers to /register read as the Swift client reads them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admit, connectRelayRoad, RelayRegistration, RoadAttemptError } from '../js/relay-road.js';
import { SocketInbox } from '../js/frame-pipe.js';
import { RelayConnectionError } from '../js/relay-link.js';
import { RelayEndpoint } from '../js/relay-endpoint.js';
import { RelayJoinKey } from '../js/relay-join.js';
import { FakeClock, settle } from '../test-support/fake-clock.js';
import { generateKeyPair } from '../js/x25519.js';
import { RelayJSON } from '../js/relay-json.js';

/** @typedef {import('../js/frame-pipe.js').RelaySocketEvent} RelaySocketEvent */

const RELAY = RelayEndpoint.parse('https://relay.example.com');
const ROOM = 'ab'.repeat(32);
const CHALLENGE = `{"nonce":"${RelayJSON.base64(new Uint8Array(32).fill(1))}"}`;

/** A socket the test plays the relay of: what it was sent, and events to push. */
function scripted() {
  /** @type {(string | Uint8Array)[]} */
  const sent = [];
  /** @type {((event: RelaySocketEvent) => void) | null} */
  let handler = null;
  /** @type {RelaySocketEvent[]} */
  const queue = [];
  let state = 'open';
  const socket = {
    sendText: (/** @type {string} */ text) => { sent.push(text); },
    send: (/** @type {Uint8Array} */ bytes) => { sent.push(bytes); },
    close: () => { state = 'closed'; },
    abandon: () => { state = 'abandoned'; },
    listen: (/** @type {(event: RelaySocketEvent) => void} */ next) => {
      handler = next;
      while (queue.length > 0) next(/** @type {RelaySocketEvent} */ (queue.shift()));
    },
  };
  return {
    socket, sent, state: () => state,
    /** @param {RelaySocketEvent} event */
    push(event) {
      if (handler === null) queue.push(event);
      else handler(event);
    },
  };
}

/**
 * The error `promise` rejects with.
 * @param {Promise<unknown>} promise
 */
async function failure(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('it did not fail');
}

test('admission: the refusals and breaches, each a RelayConnectionError of its kind, in words', async () => {
  const clock = new FakeClock();
  /**
   * @param {(relay: ReturnType<typeof scripted>) => void} play
   * @param {RelayJoinKey | null} [joinKey]
   */
  const run = async (play, joinKey = null) => {
    const relay = scripted();
    const attempt = admit(new SocketInbox(relay.socket), { role: 'phone', room: ROOM, relay: RELAY, joinKey, clock });
    play(relay);
    return { error: await failure(attempt), relay };
  };
  /** @param {unknown} error @param {string} kind @param {RegExp} words */
  const is = (error, kind, words) => {
    assert.ok(error instanceof RelayConnectionError, String(error));
    assert.equal(error.kind, kind, error.message);
    assert.match(error.message, words);
  };
  is((await run((r) => r.push({ type: 'closed', code: 1006, reason: '', opened: false }))).error, 'connectionLost',
    /cannot reach the relay relay\.example\.com \(the WebSocket did not open: close 1006\)/);
  const beforeChallenge = await run((r) => { r.push({ type: 'open' }); r.push({ type: 'closed', code: 1008, reason: 'bad hello', opened: true }); });
  is(beforeChallenge.error, 'closed', /before the challenge: 1008 bad hello/);
  assert.deepEqual(beforeChallenge.relay.sent, ['{"v":1,"role":"phone"}']);
  is((await run((r) => { r.push({ type: 'open' }); r.push({ type: 'text', text: '{"nonce":"AAAA"}' }); })).error, 'protocolViolation',
    /challenge is not \{"nonce":<32 bytes>\}/);
  is((await run((r) => { r.push({ type: 'open' }); r.push({ type: 'binary', bytes: new Uint8Array(1) }); })).error, 'protocolViolation',
    /binary frame instead of the challenge/);
  const refused = await run((r) => {
    r.push({ type: 'open' });
    r.push({ type: 'text', text: CHALLENGE });
    r.push({ type: 'text', text: '{"ok":false,"error":"mac offline"}' });
  });
  is(refused.error, 'refused', /relay refused admission as phone: mac offline/);
  assert.equal(/** @type {RelayConnectionError} */ (refused.error).serverError, 'mac offline');
  assert.equal(refused.relay.sent[1], '{}', 'an unsigned Proof without a join key');
  is((await run((r) => {
    r.push({ type: 'open' });
    r.push({ type: 'text', text: CHALLENGE });
    r.push({ type: 'text', text: '{"ok":true,"registrationToken":"AAAA"}' });
  })).error, 'protocolViolation', /registration token is 3 bytes, not 24/);
  is((await run((r) => {
    r.push({ type: 'open' });
    r.push({ type: 'text', text: CHALLENGE });
    r.push({ type: 'text', text: 'ok' });
  })).error, 'protocolViolation', /admission result is not \{"ok":…\}/);
  // The limits: 10 s for the socket to open, 15 s for the admission.
  const silent = scripted();
  const waiting = failure(admit(new SocketInbox(silent.socket), { role: 'phone', room: ROOM, relay: RELAY, joinKey: null, clock }));
  await clock.advance(9.9);
  await clock.advance(0.1);
  is(await waiting, 'timedOut', /did not open in time/);
  const slow = scripted();
  const admitting = failure(admit(new SocketInbox(slow.socket), { role: 'phone', room: ROOM, relay: RELAY, joinKey: null, clock }));
  slow.push({ type: 'open' });
  await clock.advance(15);
  is(await admitting, 'timedOut', /did not send the challenge in time/);
  const signed = scripted();
  const key = await RelayJoinKey.fromRoomSecret(new Uint8Array(32).fill(8));
  const proving = admit(new SocketInbox(signed.socket), { role: 'phone', room: ROOM, relay: RELAY, joinKey: key, clock });
  signed.push({ type: 'open' });
  signed.push({ type: 'text', text: CHALLENGE });
  await settle();
  assert.match(String(signed.sent[1]), /^\{"sig":"[A-Za-z0-9+/]{86}=="\}$/);
  signed.push({ type: 'text', text: '{"ok":true}' });
  assert.equal(await proving, null);
});

test("an attempt's failures as a device reads them: the computer away, the pairing gone, a silent computer, a broken greeting", async () => {
  const clock = new FakeClock();
  const roomSecret = new Uint8Array(32).fill(8);
  const joinKey = await RelayJoinKey.fromRoomSecret(roomSecret);
  const computerKey = await generateKeyPair();
  /** @type {{status: number, text: string}} */
  let roomCheck = { status: 403, text: '{"ok":false,"error":"already registered"}' };
  /** @type {string[]} */
  const posted = [];
  const http = { post: async (/** @type {string} */ _path, /** @type {string} */ _room, /** @type {string} */ body) => { posted.push(body); return roomCheck; } };
  /**
   * @param {(relay: ReturnType<typeof scripted>) => Promise<void> | void} play
   * @param {boolean} [registered]
   */
  const attempt = async (play, registered = true) => {
    const relay = scripted();
    const result = connectRelayRoad(new SocketInbox(relay.socket), {
      pairing: { relay: RELAY, room: ROOM, computerKey: computerKey.publicKey, pairingID: 'p', roomSecret, registered },
      joinKey, deviceName: 'phone', staticKey: await generateKeyPair(), http, clock,
    });
    const error = failure(result);
    await play(relay);
    const thrown = await error;
    assert.ok(thrown instanceof RoadAttemptError, String(thrown));
    return thrown.failure;
  };
  /** @param {ReturnType<typeof scripted>} relay @param {string} result */
  const admitted = async (relay, result) => {
    relay.push({ type: 'open' });
    relay.push({ type: 'text', text: CHALLENGE });
    await settle();
    relay.push({ type: 'text', text: result });
  };
  assert.deepEqual(await attempt((r) => admitted(r, '{"ok":false,"error":"mac offline"}')), { kind: 'computerOffline', relay: 'relay.example.com' });
  assert.equal(posted.length, 1, 'the room check: /register with a token nobody was given');
  assert.match(posted[0], /^\{"registrationToken":"A{32}","verifier":"/);
  roomCheck = { status: 403, text: '{"ok":false,"error":"bad token"}' };
  assert.deepEqual(await attempt((r) => admitted(r, '{"ok":false,"error":"mac offline"}')),
    { kind: 'pairingGone', why: 'the relay no longer holds the room' });
  assert.deepEqual(await attempt((r) => admitted(r, '{"ok":false,"error":"bad signature"}')), { kind: 'pairingGone', why: 'bad signature' });
  assert.deepEqual(await attempt(async (r) => {
    await admitted(r, '{"ok":true,"registrationToken":"DAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM"}');
    await settle();
    await clock.advance(15);
  }), { kind: 'unavailable', why: 'the computer did not answer in time' });
  assert.deepEqual(await attempt(async (r) => {
    await admitted(r, '{"ok":true,"registrationToken":"DAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM"}');
    r.push({ type: 'closed', code: 1001, reason: 'peer gone', opened: true });
  }), { kind: 'unavailable', why: 'the relay closed the connection (1001 peer gone)' });
  assert.deepEqual(await attempt(async (r) => {
    await admitted(r, '{"ok":true,"registrationToken":"DAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM"}');
    r.push({ type: 'closed', code: 1008, reason: 'daily quota exceeded', opened: true });
  }), { kind: 'quotaExceeded', relay: 'relay.example.com', resetsBy: clock.unixTime() + 86400 });
});

test('/register answers as the Swift client reads them', async () => {
  /** @param {number} status @param {string} text */
  const relay = (status, text) => ({ post: async () => ({ status, text }) });
  const verifier = new Uint8Array(32);
  await RelayRegistration.register(relay(200, '{"ok":true}'), ROOM, new Uint8Array(24), verifier);
  for (const [status, text, kind, serverError] of /** @type {[number, string, string, string | null][]} */ ([
    [403, '{"ok":false,"error":"already registered"}', 'httpStatus', 'already registered'],
    [403, '{"ok":false,"error":"bad token"}', 'httpStatus', 'bad token'],
    [400, 'bad room\n', 'httpStatus', 'bad room'], [429, 'rate limited', 'httpStatus', 'rate limited'],
    [502, '<html>\n<body>Bad Gateway</body>\n</html>', 'httpStatus', null], [500, 'x'.repeat(201), 'httpStatus', null],
    [200, '{"ok":false}', 'protocolViolation', null], [200, 'fine', 'protocolViolation', null],
  ])) {
    const error = await failure(RelayRegistration.register(relay(status, text), ROOM, new Uint8Array(24), verifier));
    assert.ok(error instanceof RelayConnectionError);
    assert.equal(error.kind, kind, text);
    assert.equal(error.serverError, serverError, text);
  }
  const lost = await failure(RelayRegistration.register({ post: () => Promise.reject(new Error('offline')) }, ROOM, new Uint8Array(24), verifier));
  assert.ok(lost instanceof RelayConnectionError && lost.kind === 'connectionLost' && /offline/.test(lost.message));
  assert.equal(await RelayRegistration.roomIsEstablished(relay(403, '{"ok":false,"error":"already registered"}'), ROOM, verifier), true);
  assert.equal(await RelayRegistration.roomIsEstablished(relay(403, '{"ok":false,"error":"bad token"}'), ROOM, verifier), false);
  await assert.rejects(RelayRegistration.roomIsEstablished(relay(503, 'store unavailable'), ROOM, verifier), RelayConnectionError);
});
