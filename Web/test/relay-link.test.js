// The relay client's policies as Tests/RelayClientTests/RelayBackoffTests.swift checks the Swift
// twins: the backoff's ladder and jitter, the dispositions of closes and refusals, what each
// failure means to a device (RoadFailure), and the admission frames' texts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayBackoff } from '../js/relay-backoff.js';
import { RelayLink, RelayConnectionError } from '../js/relay-link.js';
import { RelayClose, RelayAdmission } from '../js/relay-protocol.js';
import { RoadFailure } from '../js/road-failure.js';
import { RetryAfterDrop } from '../js/retry-after-drop.js';
import { toHex } from '../js/bytes.js';

/** @param {number} a @param {number} b */
const near = (a, b) => Math.abs(a - b) < 1e-9;

test('the backoff doubles from 0.5 s to a 30 s ceiling; jitter only takes off; a long connection resets it', () => {
  const backoff = new RelayBackoff();
  const delays = Array.from({ length: 10 }, () => backoff.nextDelay(0));
  assert.deepEqual(delays, [0.5, 1, 2, 4, 8, 16, 30, 30, 30, 30]);
  assert.equal(backoff.attempt, 10);
  const jittered = new RelayBackoff();
  assert.ok(near(jittered.nextDelay(1), 0.4));
  assert.ok(near(jittered.nextDelay(0.5), 0.9));
  for (let i = 0; i < 6; i++) jittered.nextDelay(0);
  assert.ok(near(jittered.nextDelay(1), 24));
  assert.ok(near(jittered.nextDelay(7), 24));
  assert.ok(near(jittered.nextDelay(-1), 30));
  const reset = new RelayBackoff();
  for (let i = 0; i < 5; i++) reset.nextDelay(0);
  reset.connectionEnded(30);
  assert.equal(reset.nextDelay(0), 16, 'a connection of exactly 30 s does not reset');
  reset.connectionEnded(30.5);
  assert.equal(reset.attempt, 0);
  assert.equal(reset.nextDelay(0), 0.5);
  const custom = new RelayBackoff({ initialDelay: 0.05, maximumDelay: 0.3, multiplier: 3, jitter: 0 });
  assert.deepEqual(Array.from({ length: 4 }, () => Math.round(custom.nextDelay(0.9) * 1000)), [50, 150, 300, 300]);
  assert.throws(() => new RelayBackoff({ jitter: 2 }), RangeError);
  assert.equal(RelayBackoff.soonDelay(0), 0.5);
  assert.equal(RelayBackoff.soonDelay(1), 0.25);
  assert.equal(RelayBackoff.soonDelay(7), 0.25);
  assert.ok(!RetryAfterDrop.atOnce(1.999) && RetryAfterDrop.atOnce(2));
});

test("closes that mean don't retry stop the link; the others retry; reshard only with its own code", () => {
  /** @param {import('../js/relay-protocol.js').RelayCloseValue} close */
  const after = (close) => RelayLink.afterEnd({ type: 'closedByRelay', close });
  assert.deepEqual(after(RelayClose.roomDeleted), { type: 'stop', reason: { type: 'roomDeleted' } });
  assert.deepEqual(after(RelayClose.pairingCycleCap), { type: 'stop', reason: { type: 'pairingCycleCap' } });
  assert.deepEqual(after(RelayClose.displaced), { type: 'stop', reason: { type: 'displaced' } });
  assert.deepEqual(after(RelayClose.roomExpired), { type: 'stop', reason: { type: 'needsRepairing', reason: 'room expired' } });
  for (const close of [RelayClose.peerGone, RelayClose.serverShuttingDown, RelayClose.frameRateExceeded, RelayClose.internalError]) {
    assert.equal(after(close).type, 'retry', RelayClose.text(close));
  }
  assert.equal(RelayLink.afterEnd({ type: 'closedLocally' }).type, 'retry');
  assert.equal(RelayLink.afterEnd({ type: 'failed', message: 'x' }).type, 'retry');
  assert.equal(after(RelayClose.reshard).type, 'retrySoon');
  assert.equal(after(RelayClose.make(1000, 'reshard')).type, 'retry', 'the reason alone is not enough');
});

test('refusals that mean re-pair stop the link; transient ones retry; HTTP refusals stop, overload retries', () => {
  /** @param {string} reason */
  const refused = (reason) => RelayLink.afterError(new RelayConnectionError('refused', 'refused',
    { serverError: reason, close: RelayClose.refused(reason) }));
  assert.deepEqual(refused('bad signature'), { type: 'stop', reason: { type: 'needsRepairing', reason: 'bad signature' } });
  assert.deepEqual(refused('signature required'), { type: 'stop', reason: { type: 'needsRepairing', reason: 'signature required' } });
  assert.deepEqual(refused('ticket required'), { type: 'stop', reason: { type: 'refused', reason: 'ticket required' } });
  assert.deepEqual(refused('bad proof'), { type: 'stop', reason: { type: 'refused', reason: 'bad proof' } });
  for (const reason of ['mac offline', 'slot occupied', 'rate limited']) assert.equal(refused(reason).type, 'retry', reason);
  assert.deepEqual(RelayLink.afterError(new RelayConnectionError('closed', 'closed', { close: RelayClose.pairingCycleCap })),
    { type: 'stop', reason: { type: 'pairingCycleCap' } });
  assert.deepEqual(RelayLink.afterError(new RelayConnectionError('closed', 'closed', { close: RelayClose.refused('bad hello') })),
    { type: 'stop', reason: { type: 'refused', reason: 'bad hello' } });
  assert.deepEqual(RelayLink.afterError(new RelayConnectionError('httpStatus', 'x', { status: 403, serverError: 'forbidden' })),
    { type: 'stop', reason: { type: 'refused', reason: 'HTTP 403 forbidden' } });
  for (const status of [429, 502, 503]) {
    assert.equal(RelayLink.afterError(new RelayConnectionError('httpStatus', 'x', { status })).type, 'retry', String(status));
  }
  assert.deepEqual(RelayLink.afterError(new RelayConnectionError('httpStatus', 'x', { status: 421, serverError: 'reshard' })),
    { type: 'retrySoon', reason: 'HTTP 421 reshard' });
  assert.equal(RelayLink.afterError(new RelayConnectionError('closed', 'closed', { close: RelayClose.reshard })).type, 'retrySoon');
  assert.equal(RelayLink.afterError(new RelayConnectionError('connectionLost', 'down')).type, 'retry');
  assert.equal(RelayLink.stopText({ type: 'needsRepairing', reason: 'bad signature' }), 'remote access needs re-pairing (bad signature)');
});

test("what a relay's answer means to a device: pairing gone, quota, offline, displaced, refused, resharding", () => {
  const now = 1_800_000_000;
  /** @param {import('../js/relay-protocol.js').RelayCloseValue} close */
  const ended = (close) => RoadFailure.ofEnd({ type: 'closedByRelay', close }, 'relay.test', now);
  assert.deepEqual(ended(RelayClose.dailyQuotaExceeded), { kind: 'quotaExceeded', relay: 'relay.test', resetsBy: now + 86400 });
  assert.deepEqual(ended(RelayClose.roomDeleted), { kind: 'pairingGone', why: 'room deleted' });
  assert.deepEqual(ended(RelayClose.roomExpired), { kind: 'pairingGone', why: 'room expired' });
  assert.deepEqual(ended(RelayClose.displaced), { kind: 'displaced' });
  assert.deepEqual(ended(RelayClose.reshard), { kind: 'resharding', relay: 'relay.test' });
  assert.deepEqual(ended(RelayClose.peerGone), { kind: 'unavailable', why: 'the relay closed the connection (1001 peer gone)' });
  assert.deepEqual(RoadFailure.ofEnd({ type: 'failed', message: 'the socket broke' }, 'relay.test', now),
    { kind: 'unavailable', why: 'the connection ended (the socket broke)' });
  /** @param {string} reason */
  const refused = (reason) => RoadFailure.ofError(new RelayConnectionError('refused', `relay refused admission as phone: ${reason}`,
    { serverError: reason, close: RelayClose.refused(reason) }), 'relay.test', now);
  assert.deepEqual(refused('mac offline'), { kind: 'computerOffline', relay: 'relay.test' });
  assert.deepEqual(refused('bad signature'), { kind: 'pairingGone', why: 'bad signature' });
  assert.deepEqual(refused('ticket required'), { kind: 'refused', why: 'ticket required' });
  assert.deepEqual(refused('rate limited'), { kind: 'unavailable', why: 'relay refused admission as phone: rate limited' });
  const quota = RoadFailure.ofError(new RelayConnectionError('closed', 'closed', { close: RelayClose.dailyQuotaExceeded }), 'relay.test', now);
  assert.match(RoadFailure.describe(quota), /daily byte quota.*by 2027-01-16 08:00 UTC at the latest/);
  assert.match(RoadFailure.describe({ kind: 'pairingGone', why: 'room deleted' }), /pair again with a new code from herdr-host pair/);
  assert.match(RoadFailure.describe({ kind: 'computerOffline', relay: 'relay.test' }), /herdr-host run/);
});

test('admission frames: Hello, Challenge, Proof and Result as the relay reads and writes them', () => {
  assert.equal(RelayAdmission.hello('phone'), '{"v":1,"role":"phone"}');
  assert.equal(RelayAdmission.hello('mac', true), '{"v":1,"role":"mac","nonDisplacing":true}');
  assert.equal(toHex(/** @type {Uint8Array} */ (RelayAdmission.challengeNonce('{"nonce":"Dg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4="}'))),
    '0e'.repeat(32));
  for (const bad of ['{"nonce":"Dg4O"}', '{}', '[]', 'null', 'nonce', '{"nonce":7}', '{"nonce":"Dg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4"}']) {
    assert.equal(RelayAdmission.challengeNonce(bad), null, bad);
  }
  assert.equal(RelayAdmission.proof({ type: 'empty' }), '{}');
  assert.equal(RelayAdmission.proof({ type: 'signature', signature: Uint8Array.of(1, 2) }), '{"sig":"AQI="}');
  assert.equal(RelayAdmission.proof({ type: 'ticket', ticket: 'a"b' }), '{"ticket":"a\\"b"}');
  assert.deepEqual(RelayAdmission.result('{"ok":true}'), { type: 'admitted', registrationToken: null });
  assert.deepEqual(RelayAdmission.result('{"ok":true,"registrationToken":"DAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM"}'),
    { type: 'admitted', registrationToken: new Uint8Array(24).fill(12) });
  assert.deepEqual(RelayAdmission.result('{"ok":false,"error":"mac offline"}'), { type: 'refused', error: 'mac offline' });
  assert.deepEqual(RelayAdmission.result('{"ok":false}'), { type: 'refused', error: '' });
  for (const bad of ['{"ok":1}', '{"ok":true,"registrationToken":null}', '{"ok":true,"registrationToken":"*"}', '[]', 'x']) {
    assert.equal(RelayAdmission.result(bad), null, bad);
  }
});
