// PathLiveness, DeviceInputLog and PathWindow with the time passed in, as
// Tests/CompanionTests/PathLivenessTests.swift checks the Swift twins.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PathLiveness } from '../js/path-liveness.js';
import { PathWindow } from '../js/path-window.js';
import { DeviceInputLog } from '../js/device-input-log.js';
import { FrameBudget, DeviceOutputFlow } from '../js/session-flow.js';
import { utf8 } from '../js/bytes.js';

/**
 * A ping due at `now`, else a suspicion (PathLiveness.tick).
 * @param {PathLiveness} path
 * @param {number} now
 */
function tick(path, now) {
  const id = path.pingIfDue(now);
  if (id !== null) return { ping: id };
  const silent = path.suspicion(now);
  return silent === null ? null : { suspect: Math.round(silent * 1e9) / 1e9 };
}

test('an idle path is pinged after 5 silent seconds and suspect a second later, told once', () => {
  const path = new PathLiveness(100);
  assert.equal(tick(path, 104.9), null);
  assert.equal(path.nextDeadline(), 105);
  assert.deepEqual(tick(path, 105), { ping: 1 });
  assert.ok(path.isOwed);
  assert.equal(tick(path, 105.9), null, 'no round trip known: the floor of 1 s');
  assert.equal(path.nextDeadline(), 106);
  assert.deepEqual(tick(path, 106), { suspect: 6 });
  assert.equal(tick(path, 107), null, 'a suspicion is told once');
  path.heard(107.5);
  assert.deepEqual(tick(path, 108.5), { suspect: 1 }, 'heard, then silent again');
});

test('anything heard keeps a path with a ping out alive', () => {
  const path = new PathLiveness(0);
  assert.deepEqual(tick(path, 5), { ping: 1 });
  for (let time = 5.5; time <= 30; time += 0.5) {
    path.heard(time);
    assert.equal(tick(path, time + 0.4), null, 'a flood whose pong waits behind it is not a dead path');
  }
});

test('pongs give the smoothed round trip (RFC 6298) and it sets the silence limit', () => {
  const path = new PathLiveness(0);
  assert.deepEqual(tick(path, 5), { ping: 1 });
  assert.equal(path.pong(1, 5.5), 0.5);
  assert.deepEqual([path.smoothedRTT, path.rttVariation], [0.5, 0.25]);
  assert.equal(path.silenceLimit, 2, '4 round trips of 0.5 s');
  assert.ok(!path.isOwed);
  assert.deepEqual(tick(path, 10.5), { ping: 2 });
  path.pong(2, 10.75);
  assert.equal(path.rttVariation, 0.25);
  assert.equal(path.smoothedRTT, 0.46875);
  assert.equal(path.pong(7, 11), null, 'a pong for no ping out is no sample');
  assert.equal(path.smoothedRTT, 0.46875);
});

test('a keystroke is covered by a ping within a quarter second', () => {
  const path = new PathLiveness(0);
  path.sentSessionMessage();
  assert.deepEqual(tick(path, 1), { ping: 1 }, "the first keystroke's ping goes at once");
  path.pong(1, 1.01);
  path.sentSessionMessage();
  assert.equal(tick(path, 1.1), null, 'a ping went 0.1 s ago: this one waits');
  assert.equal(path.nextDeadline(), 1.25);
  assert.deepEqual(tick(path, 1.25), { ping: 2 });
  path.sentSessionMessage();
  assert.equal(tick(path, 1.6), null, 'a ping is out: it covers this keystroke too');
  assert.equal(tick(path, 2.2), null);
  assert.deepEqual(tick(path, 2.25), { suspect: 1.24 }, 'nothing came: 1 s after the ping');
});

test('a failed race waits before the next suspicion', () => {
  const path = new PathLiveness(0);
  assert.deepEqual(tick(path, 5), { ping: 1 });
  assert.deepEqual(tick(path, 6), { suspect: 6 });
  path.suspectAgain(8);
  assert.equal(tick(path, 7.9), null);
  assert.equal(path.nextDeadline(), 8);
  assert.deepEqual(tick(path, 8), { suspect: 8 });
});

test('the input log resends exactly what the computer did not receive, and keeps only the last MiB', () => {
  const log = new DeviceInputLog();
  log.record(utf8('echo one\r'));
  log.record(utf8('echo two\r'));
  assert.equal(log.sent, 18n);
  assert.deepEqual(log.rewind(9n), utf8('echo two\r'));
  assert.equal(log.sent, 9n, 'the count goes back to what arrived');
  assert.deepEqual(log.rewind(9n), new Uint8Array(0), 'everything arrived: nothing again');
  assert.equal(log.rewind(10n), null, 'more than was sent is no answer to act on');
  log.record(utf8('x'));
  assert.deepEqual(log.rewind(9n), utf8('x'));

  const big = new DeviceInputLog();
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  for (let i = 0; i < 20; i++) big.record(chunk);
  const sent = big.sent;
  assert.equal(sent, 20n * 65536n);
  assert.equal(big.rewind(sent - BigInt(DeviceInputLog.capacity) - 1n), null, 'no longer kept');
  assert.equal(big.sent, sent, 'left alone');
  assert.equal(big.rewind(sent - BigInt(DeviceInputLog.capacity))?.length, DeviceInputLog.capacity);
  big.reset();
  assert.equal(big.sent, 0n);
});

/**
 * Feeds `rate` bytes a second for `seconds` in 10 ms steps from `start`; the changes asked for.
 * @param {PathWindow} window
 * @param {number} rate
 * @param {number} seconds
 * @param {number} start
 */
function feed(window, rate, seconds, start) {
  const changes = [];
  for (let time = start; time < start + seconds - 1e-9;) {
    time += 0.01;
    const change = window.received(Math.trunc(rate * 0.01), time);
    if (change !== null) changes.push(change);
  }
  return changes;
}

test('the window: two bandwidth-delay products and what comes between credits, lumps not inflating it', () => {
  const window = new PathWindow(4 * 1024 * 1024);
  assert.equal(window.current, PathWindow.floor, 'it starts small');
  window.roundTrip(0.1);
  const changes = feed(window, 2_500_000, 2, 0);
  const wanted = 2 * 2_500_000 * (0.1 + PathWindow.creditInterval);
  assert.ok(changes.length > 0);
  assert.ok(Math.abs(window.current - wanted) < wanted * 0.3, `${window.current} against ${wanted}`);
  assert.ok(window.current < 1024 * 1024);

  const lumpy = new PathWindow(4 * 1024 * 1024);
  lumpy.roundTrip(0.1);
  const lump = 256 * 1024;
  const spacing = lump / 2_500_000;
  let seed = 12345n;
  for (let index = 1; index < 60; index++) {
    seed = (seed * 1103515245n + 12345n) % (1n << 31n);
    lumpy.received(lump, index * spacing + (Number(seed) / 2 ** 31) * 0.09);
  }
  assert.ok(Math.abs(lumpy.current - wanted) < wanted * 0.2, `${lumpy.current} against ${wanted}`);
});

test('a window grown too large comes back down; a fast path grows to the ceiling; floor and ceiling hold', () => {
  const window = new PathWindow(4 * 1024 * 1024);
  window.roundTrip(0.43);
  feed(window, 2_500_000, 0.5, 0);
  assert.ok(window.current > 1024 * 1024);
  window.roundTrip(0.1);
  feed(window, 2_500_000, 2, 0.5);
  const wanted = 2 * 2_500_000 * (0.1 + PathWindow.creditInterval);
  assert.ok(Math.abs(window.current - wanted) < wanted * 0.3, `${window.current} against ${wanted}`);

  const fast = new PathWindow(4 * 1024 * 1024);
  fast.roundTrip(0.0005);
  feed(fast, 40_000_000, 2, 0);
  assert.equal(fast.current, 4 * 1024 * 1024);
  assert.deepEqual(feed(fast, 1000, 5, 2), [], 'typing says nothing about the path');

  const small = new PathWindow(64 * 1024);
  assert.equal(small.current, 64 * 1024);
  feed(small, 50_000_000, 1, 0);
  assert.equal(small.current, 64 * 1024);
  const slow = new PathWindow(4 * 1024 * 1024);
  slow.roundTrip(0.01);
  feed(slow, 200_000, 2, 0);
  assert.equal(slow.current, PathWindow.floor, 'never below the floor');
});

test('the frame budget: a burst of 2, then 32 a second; output counted by offset, a gap refused', () => {
  const budget = FrameBudget.device();
  assert.ok(budget.take(0) && budget.take(0));
  assert.ok(!budget.take(0));
  assert.equal(budget.wait(0), 1 / 32);
  assert.ok(budget.take(1 / 32));
  const flow = new DeviceOutputFlow(1000);
  assert.deepEqual(flow.receive(0n, utf8('abc')), utf8('abc'));
  assert.deepEqual(flow.receive(1n, utf8('bcde')), utf8('de'), 'what came twice is dropped');
  assert.deepEqual(flow.receive(2n, utf8('c')), new Uint8Array(0));
  assert.equal(flow.receive(6n, utf8('x')), null, 'a gap');
  assert.equal(flow.consume(249), null);
  assert.equal(flow.consume(1), 250n, 'a credit every quarter window');
});
