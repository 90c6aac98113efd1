// Every policy docs/companion.md states for the device, on the machine alone with a fake clock
// (test-support/device-machine-driver.js), as Tests/CompanionTests/DeviceConnectionMachineTests
// and DeviceScreenMachineTests check the Swift twin: connecting, liveness and the race, the
// reconnect ladder, input resent after a resume, the frame budget, the window, the agents board,
// screen sessions, the end; and the browser's own input, a page that comes back from the background.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeviceMachineDriver, arrival, TOKEN } from '../test-support/device-machine-driver.js';
import { DeviceConnectionMachine } from '../js/device-connection-machine.js';
import { PathWindow } from '../js/path-window.js';
import { CompanionMessage } from '../js/companion-message.js';
import { SessionMessage } from '../js/session-message.js';
import { ChannelMessage } from '../js/channel-message.js';
import { ScreenTarget } from '../js/screen-target.js';
import { TerminalScreen } from '../js/terminal-screen.js';
import { ScreenCell } from '../js/screen-cell.js';
import { HerdrAgent } from '../js/herdr-agent.js';
import { HerdrAvailability } from '../js/herdr-session-info.js';
import { ScreenStatesForTests } from '../test-support/screen-states.js';
import { utf8 } from '../js/bytes.js';

const Driver = DeviceMachineDriver;
const WINDOW = 4 * 1024 * 1024;

/** @param {import('../js/companion-message.js').CompanionMessage} message */
const control = (message) => CompanionMessage.encode(message);
/** @param {import('../js/session-message.js').SessionMessage} message */
const session = (message) => SessionMessage.encode(message);

/**
 * A screen of `cols` × `rows` with `text` on its first rows, the cursor after the first row's text.
 * @param {string[]} text
 * @param {number} [cols]
 * @param {number} [rows]
 */
function screenOf(text, cols = 80, rows = 24) {
  const lines = TerminalScreen.blankLines(cols, rows);
  text.forEach((line, row) => Array.from(line).forEach((character, column) => { lines[row][column] = ScreenCell.make(character); }));
  return TerminalScreen.make(lines, { row: 0, column: Array.from(text[0] ?? '').length, visible: true });
}

test('the first attempt connects; a connection up attaches the session and the computer starts it', () => {
  const driver = new Driver();
  const start = driver.handle({ type: 'start' });
  assert.deepEqual(start, [{ type: 'connect', id: 1 }]);
  const up = driver.handle({ type: 'attemptEnded', id: 1, result: { ok: true, arrival: arrival({ registeredNow: true }) } });
  assert.deepEqual(up[0], { type: 'adopt', id: 1 });
  assert.deepEqual(Driver.events(up), [{ type: 'registered' }, { type: 'connected', relay: 'relay.test' }]);
  assert.deepEqual(Driver.sessionSent(up), [{ type: 'open', stream: 1, name: 'main', cols: 80, rows: 24, window: WINDOW }]);
  const started = driver.started(1);
  assert.deepEqual(Driver.events(started), [{ type: 'started' }]);
  // The window starts at the path window's floor and grows as the path shows it carries more.
  assert.deepEqual(Driver.sent(started), [{ type: 'control', message: { type: 'window', stream: 1, bytes: PathWindow.floor } }]);
  assert.equal(driver.machine.phase, 'up');
});

test('the first attempt failing outright ends it at once: unreachable', () => {
  const driver = new Driver();
  driver.handle({ type: 'start' });
  const end = driver.handle({ type: 'attemptEnded', id: 1, result: { ok: false, failure: { kind: 'unavailable', why: 'connection refused' } } });
  assert.deepEqual(Driver.finish(end), { type: 'failed', failure: { kind: 'unreachable', message: 'connection refused' } });
});

test("a computer between two parks gets the first connect's quick retries, then it is unreachable", () => {
  const driver = new Driver();
  let attempt = Driver.attempts(driver.handle({ type: 'start' }))[0];
  const waits = [];
  for (let i = 0; i < 4; i++) {
    driver.handle({ type: 'attemptEnded', id: attempt, result: { ok: false, failure: { kind: 'computerOffline', relay: 'relay.test' } } });
    const before = driver.now;
    const next = Driver.attempts(driver.runUntil(driver.machine.nextWake ?? Infinity));
    assert.equal(next.length, 1);
    waits.push(driver.now - before);
    attempt = next[0];
  }
  assert.deepEqual(waits.map((wait) => Math.round(wait * 1000) / 1000), [0.1, 0.25, 0.5, 1]);
  const end = driver.handle({ type: 'attemptEnded', id: attempt, result: { ok: false, failure: { kind: 'computerOffline', relay: 'relay.test' } } });
  assert.equal(Driver.finish(end)?.type, 'failed');
  assert.match(JSON.stringify(Driver.finish(end)), /"kind":"unreachable".*herdr-host run/);
});

test('a ping out and nothing heard for max(1 s, 4 × RTT) makes the path suspect: a race, not before', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(1);
  const typed = driver.handle({ type: 'keys', bytes: utf8('a') });
  assert.equal(Driver.input(typed), 'a');
  const pings = Driver.pings(typed);
  assert.equal(pings.length, 1, 'a keystroke is covered by a ping');
  // The pong measures a round trip of 0.5 s: the limit is then 4 × 0.5 = 2 s.
  driver.advance(0.5);
  driver.computer(id, [control({ type: 'pong', number: pings[0] })]);
  driver.advance(0.25);
  const second = driver.handle({ type: 'keys', bytes: utf8('b') });
  assert.equal(Driver.pings(second).length, 1);
  const pingAt = driver.now;
  assert.deepEqual(Driver.attempts(driver.runUntil(pingAt + 1.999)), [], '1 s is less than 4 RTT');
  assert.equal(Driver.attempts(driver.runUntil(pingAt + 2)).length, 1);
});

test("the race's connection takes the session over: the old one abandoned, the session resumed, the move said", () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.computer(id, [session({ type: 'output', stream: 1, offset: 0n, data: utf8('AB') })]);
  driver.handle({ type: 'shown', count: 2 });
  driver.advance(1);
  const pingAt = driver.now;
  driver.handle({ type: 'keys', bytes: utf8('a') });
  const race = driver.runUntil(pingAt + 1);
  const raceID = Driver.attempts(race)[0];
  const moved = driver.arrive(race);
  assert.deepEqual(moved.slice(0, 2), [{ type: 'abandon', id }, { type: 'adopt', id: raceID }]);
  assert.deepEqual(Driver.events(moved), [
    { type: 'moved', relay: 'relay.test', because: { type: 'pathWentQuiet', seconds: 2 } }, { type: 'connected', relay: 'relay.test' },
  ]);
  assert.deepEqual(Driver.sessionSent(moved), [{ type: 'resume', stream: 2, token: TOKEN, received: 2n, cols: 80, rows: 24, window: WINDOW }]);
  // The old connection's late frames and end change nothing.
  assert.deepEqual(driver.handle({ type: 'ended', id, failure: { kind: 'displaced' } }), []);
  assert.deepEqual(driver.computer(id, [control({ type: 'ping', number: 9 })]), []);
});

test('a race that fails is tried again 2 s later while the path stays quiet; anything heard clears the suspicion', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(1);
  driver.handle({ type: 'keys', bytes: utf8('a') });
  const race = Driver.attempts(driver.advance(1))[0];
  driver.handle({ type: 'attemptEnded', id: race, result: { ok: false, failure: { kind: 'unavailable', why: 'no route' } } });
  const failedAt = driver.now;
  assert.deepEqual(Driver.attempts(driver.runUntil(failedAt + 1.999)), []);
  assert.equal(Driver.attempts(driver.runUntil(failedAt + 2)).length, 1);

  const heard = new Driver();
  const other = heard.connect();
  heard.started(other);
  heard.advance(1);
  heard.handle({ type: 'keys', bytes: utf8('a') });
  heard.advance(0.9);
  heard.computer(other, [session({ type: 'output', stream: 1, offset: 0n, data: utf8('a') })]);
  assert.deepEqual(Driver.attempts(heard.advance(0.5)), []);
});

test('an idle connection pings after 5 s of silence', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  assert.deepEqual(Driver.pings(driver.runUntil(1004.999)), []);
  assert.deepEqual(Driver.pings(driver.runUntil(1005)), [1]);
});

test('a connection up for 2 s that drops is retried at once; one that drops sooner waits the backoff', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(3);
  const drop = driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'the connection was reset' } });
  assert.deepEqual(Driver.events(drop), [{ type: 'reconnecting', attempt: 1, reason: 'the connection was reset' }]);
  assert.equal(Driver.attempts(drop).length, 1);
  driver.arrive(drop);
  const second = /** @type {NonNullable<typeof driver.machine.link>} */ (driver.machine.link).id;
  driver.advance(1);
  const early = driver.handle({ type: 'ended', id: second, failure: { kind: 'unavailable', why: 'reset again' } });
  assert.deepEqual(Driver.events(early), [{ type: 'reconnecting', attempt: 1, reason: 'reset again' }]);
  assert.deepEqual(Driver.attempts(early), []);
  const droppedAt = driver.now;
  assert.deepEqual(Driver.attempts(driver.runUntil(droppedAt + 0.499)), []);
  assert.equal(Driver.attempts(driver.runUntil(droppedAt + 0.5)).length, 1);
});

test('after the at-once attempt: the backoff ladder, 1 s doubling to 15 s, then it gives up after 10 attempts', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(3);
  let attempt = Driver.attempts(driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'reset' } }))[0];
  const delays = [];
  for (let number = 2; number <= 10; number++) {
    const failed = driver.handle({ type: 'attemptEnded', id: attempt, result: { ok: false, failure: { kind: 'unavailable', why: `refused ${number - 1}` } } });
    assert.deepEqual(Driver.events(failed), [{ type: 'reconnecting', attempt: number, reason: `refused ${number - 1}` }]);
    const before = driver.now;
    attempt = Driver.attempts(driver.runUntil(driver.machine.nextWake ?? Infinity))[0];
    delays.push(driver.now - before);
  }
  assert.deepEqual(delays, [1, 2, 4, 8, 15, 15, 15, 15, 15]);
  const end = driver.handle({ type: 'attemptEnded', id: attempt, result: { ok: false, failure: { kind: 'unavailable', why: 'refused 10' } } });
  assert.deepEqual(Driver.finish(end), { type: 'failed', failure: { kind: 'connectionLost', message: 'gave up reconnecting after 10 attempts; last: refused 10' } });
});

test('the at-once attempt finding the computer between two parks retries quickly, then backs off', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(3);
  let attempt = Driver.attempts(driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'reset' } }))[0];
  const waits = [];
  for (let i = 0; i < DeviceConnectionMachine.reparkRetries.length; i++) {
    driver.handle({ type: 'attemptEnded', id: attempt, result: { ok: false, failure: { kind: 'computerOffline', relay: 'relay.test' } } });
    const before = driver.now;
    attempt = Driver.attempts(driver.runUntil(driver.machine.nextWake ?? Infinity))[0];
    waits.push(Math.round((driver.now - before) * 1000) / 1000);
  }
  assert.deepEqual(waits, [0.02, 0.05, 0.1, 0.25, 0.5, 1]);
  const backOff = driver.handle({ type: 'attemptEnded', id: attempt, result: { ok: false, failure: { kind: 'computerOffline', relay: 'relay.test' } } });
  assert.equal(/** @type {any} */ (Driver.events(backOff)[0]).attempt, 2);
  assert.equal(driver.machine.nextWake, driver.now + 1);
});

test('with reconnecting off a drop ends the session and a quiet path starts no race', () => {
  const driver = new Driver((settings) => { settings.retryDelay = () => null; });
  const id = driver.connect();
  driver.started(id);
  driver.advance(1);
  driver.handle({ type: 'keys', bytes: utf8('a') });
  assert.deepEqual(Driver.attempts(driver.advance(5)), []);
  const drop = driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'reset' } });
  assert.deepEqual(Driver.finish(drop), { type: 'failed', failure: { kind: 'connectionLost', message: 'the link dropped (reset); reconnecting is off' } });
});

test("the relay closing the old connection for the race's new one is no refusal: it is retried", () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(1);
  driver.handle({ type: 'keys', bytes: utf8('a') });
  const race = Driver.attempts(driver.advance(1))[0];
  assert.equal(Driver.finish(driver.handle({ type: 'ended', id, failure: { kind: 'displaced' } })), null);
  assert.equal(driver.machine.phase, 'awaitingRace');
  const failed = driver.handle({ type: 'attemptEnded', id: race, result: { ok: false, failure: { kind: 'unavailable', why: 'handshake failed' } } });
  const first = /** @type {any} */ (Driver.events(failed)[0]);
  assert.equal(first.type, 'reconnecting');
  assert.match(first.reason, /took the old one's place/);
});

test('refusals end it in words: the pairing gone, the quota, another device, a relay that refuses', () => {
  for (const [failure, kind] of /** @type {[import('../js/road-failure.js').RoadFailure, string][]} */ ([
    [{ kind: 'pairingGone', why: 'room deleted' }, 'pairingGone'], [{ kind: 'quotaExceeded', relay: 'relay.test', resetsBy: 0 }, 'relayRefused'],
    [{ kind: 'displaced' }, 'relayRefused'], [{ kind: 'refused', why: 'ticket required' }, 'relayRefused'],
  ])) {
    const driver = new Driver();
    const id = driver.connect();
    driver.started(id);
    driver.advance(3);
    const end = /** @type {any} */ (Driver.finish(driver.handle({ type: 'ended', id, failure })));
    assert.equal(end?.failure.kind, kind, failure.kind);
    assert.ok(end.failure.message.length > 20, end.failure.message);
  }
});

test('input in flight when the path died is sent again after inputReceived, ahead of what was typed since', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(1);
  const typed = driver.handle({ type: 'keys', bytes: utf8('abc') });
  assert.equal(Driver.input(typed), 'abc');
  driver.computer(id, Driver.pings(typed).map((number) => control({ type: 'pong', number })));
  driver.advance(3);
  const drop = driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'reset' } });
  assert.equal(Driver.input(driver.handle({ type: 'keys', bytes: utf8('d') })), '', 'nothing goes while down');
  const resumed = driver.arrive(drop);
  const second = /** @type {NonNullable<typeof driver.machine.link>} */ (driver.machine.link).id;
  assert.deepEqual(Driver.sessionSent(resumed), [{ type: 'resume', stream: 2, token: TOKEN, received: 0n, cols: 80, rows: 24, window: WINDOW }]);
  const sent = driver.computer(second, [
    control({ type: 'inputReceived', stream: 2, bytes: 1n }),
    session({ type: 'started', stream: 2, token: TOKEN, offset: 0n, window: WINDOW }),
  ]);
  assert.deepEqual(Driver.events(sent), [{ type: 'resumed' }]);
  sent.push(...driver.advance(0.1));
  assert.equal(Driver.input(sent), 'bcd', 'the two bytes the computer missed, then what was typed');
  assert.equal(Driver.sessionSent(sent).filter((message) => message.type === 'input').length, 1);
});

test('keys beyond the pending limit while down are dropped', () => {
  const driver = new Driver();
  driver.handle({ type: 'start' });
  driver.handle({ type: 'keys', bytes: new Uint8Array(DeviceConnectionMachine.maximumPendingInput).fill(0x61) });
  driver.handle({ type: 'keys', bytes: utf8('b') });
  assert.equal(driver.machine.input.length, DeviceConnectionMachine.maximumPendingInput);
});

test('on the relay at most 2 frames at once and 32 a second go; keys typed meanwhile share a frame', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(1);
  /** @type {import('../js/device-connection-machine.js').DeviceAction[]} */
  const sent = [];
  /** @type {number[]} */
  const frames = [];
  let expected = '';
  for (let key = 0; key < 1000; key++) {
    const letter = String.fromCharCode(0x61 + (key % 26));
    expected += letter;
    const actions = [...driver.handle({ type: 'keys', bytes: utf8(letter) }), ...driver.advance(0.001)];
    for (const action of actions) if (action.type === 'send') frames.push(driver.now);
    sent.push(...actions);
  }
  sent.push(...driver.advance(1));
  assert.equal(Driver.input(sent), expected, 'every key, in order');
  const firstSecond = frames.filter((time) => time < frames[0] + 1).length;
  assert.ok(firstSecond <= 2 + 32, `${firstSecond} frames in the first second`);
  assert.ok(firstSecond >= 30, 'the budget is used, not starved');
});

/**
 * 10 MB/s of output on `id` for half a second, shown as it comes, after a round trip of 50 ms
 * was measured: the windows the device asked for meanwhile.
 * @param {DeviceMachineDriver} driver
 * @param {number} id
 */
function flood(driver, id) {
  driver.advance(0.1); // the attach and the window took the budget's burst
  const ping = Driver.pings(driver.handle({ type: 'keys', bytes: utf8('a') }))[0];
  driver.advance(0.05);
  driver.computer(id, [control({ type: 'pong', number: ping })]);
  const windows = [];
  let offset = driver.machine.session.flow.received;
  for (let i = 0; i < 100; i++) {
    const data = new Uint8Array(50000).fill(0x78);
    driver.computer(id, [session({ type: 'output', stream: 1, offset, data })]);
    offset += BigInt(data.length);
    // On the relay road a window change may wait for the frame budget: what the ticks send counts too.
    for (const message of Driver.sent([...driver.handle({ type: 'shown', count: data.length }), ...driver.advance(0.005)])) {
      if (message.type === 'control' && message.message.type === 'window') windows.push(message.message.bytes);
    }
  }
  assert.ok(!driver.machine.isFinished);
  return windows;
}

test('the window follows the path: 2 × rate × (least RTT + 1/16 s), at most what started named', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  const windows = flood(driver, id);
  const expected = 2 * 10_000_000 * (0.05 + PathWindow.creditInterval);
  assert.ok(windows.length >= 1);
  assert.ok(windows.every((bytes) => Math.abs(bytes - expected) < expected * 0.15), `${windows} ≈ ${expected}`);
  const capped = new Driver((settings) => { settings.window = 1024 * 1024; });
  const other = capped.connect();
  capped.started(other, { window: 1024 * 1024 });
  assert.deepEqual(flood(capped, other), [1024 * 1024]);
});

test('output goes out as writes in order; the credit follows what was shown, every quarter window', () => {
  const driver = new Driver((settings) => { settings.window = 64 * 1024; });
  const id = driver.connect();
  driver.started(id, { window: 64 * 1024 });
  const data = new Uint8Array(16 * 1024).fill(0x41);
  assert.deepEqual(driver.computer(id, [session({ type: 'output', stream: 1, offset: 0n, data })]), [{ type: 'write', bytes: data }]);
  const shown = driver.handle({ type: 'shown', count: data.length });
  assert.deepEqual(Driver.sessionSent(shown), [{ type: 'credit', stream: 1, consumed: 16384n }]);
});

const NO_BOARD = /** @type {const} */ ({ kind: 'agentsUnavailable', message: 'no board within 10 s' });

/** @param {(settings: import('../js/device-connection-machine.js').DeviceConnectionSettings) => void} [more] */
function watcher(more) {
  return new Driver((settings) => {
    settings.attach = null;
    settings.watchAgents = true;
    settings.boardWait = { seconds: 10, failure: NO_BOARD };
    more?.(settings);
  });
}

test('watching with nothing attached: the board asked for, 10 s for the first one, then the end', () => {
  const driver = watcher();
  driver.connect();
  assert.deepEqual(Driver.sent(driver.log), [{ type: 'control', message: { type: 'agents', watch: true } }]);
  assert.equal(Driver.finish(driver.runUntil(1009.999)), null);
  assert.deepEqual(Driver.finish(driver.runUntil(1010)), { type: 'failed', failure: NO_BOARD });
});

test('a board in time ends the wait and is told whole; opening an agent attaches it on the same connection', () => {
  const driver = watcher();
  const id = driver.connect();
  driver.advance(4);
  const agent = HerdrAgent.make({ session: 'default', pane: 'w1:p1' }, { name: 'claude', status: 'blocked' });
  const board = ChannelMessage.encode({ type: 'agents', message: {
    sequence: 1, kind: { kind: 'full', part: 1, parts: 1 }, herdr: HerdrAvailability.make('ready'), sessions: [], omitted: 0,
    agents: [agent], removed: [],
  } });
  const told = Driver.events(driver.computer(id, [board]));
  assert.equal(told.length, 1);
  assert.equal(told[0].type, 'agents');
  assert.deepEqual(/** @type {any} */ (told[0]).board.agents.get('default\u0000w1:p1') ?? [...(/** @type {any} */ (told[0]).board.agents.values())][0], agent);
  assert.equal(Driver.finish(driver.advance(20)), null);
  const opened = driver.handle({ type: 'open', attach: { type: 'agent', key: { session: 'default', pane: 'w1:p2' } } });
  assert.deepEqual(Driver.sessionSent(opened), [{ type: 'openAgent', stream: 1, session: 'default', pane: 'w1:p2', cols: 80, rows: 24, window: WINDOW }]);
  assert.deepEqual(driver.handle({ type: 'open', attach: { type: 'session', name: null } }), [], 'one attach');
  const off = driver.handle({ type: 'watchAgents', watch: false });
  assert.deepEqual(Driver.sent(off), [{ type: 'control', message: { type: 'agents', watch: false } }]);
});

test('a board out of order ends the session: the computer broke the board', () => {
  const driver = watcher((settings) => { settings.boardWait = null; });
  const id = driver.connect();
  const changes = ChannelMessage.encode({ type: 'agents', message: {
    sequence: 1, kind: { kind: 'changes' }, herdr: null, sessions: null, omitted: 1, agents: [], removed: [],
  } });
  assert.deepEqual(Driver.finish(driver.computer(id, [changes])), { type: 'failed', failure: {
    kind: 'protocolViolation', message: 'the computer broke the agents board: agents changes came before a whole board',
  } });
});

test('cancel tells the computer to hang up, closes the connection and finishes; an exit is answered with close', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  assert.deepEqual(driver.handle({ type: 'stop', termination: { type: 'cancelled' } }), [
    { type: 'send', bytes: session({ type: 'close', stream: 1 }) }, { type: 'close', id }, { type: 'finish', termination: { type: 'cancelled' } },
  ]);
  assert.equal(driver.machine.nextWake, null);
  assert.deepEqual(driver.handle({ type: 'attemptEnded', id: 99, result: { ok: true, arrival: arrival() } }), [{ type: 'close', id: 99 }],
    'whatever comes up after the end is closed');

  const exiting = new Driver();
  const other = exiting.connect();
  exiting.started(other);
  assert.deepEqual(exiting.computer(other, [session({ type: 'exit', stream: 1, end: 0n, status: 3, signal: null })]), [
    { type: 'send', bytes: session({ type: 'close', stream: 1 }) }, { type: 'close', id: other },
    { type: 'finish', termination: { type: 'exited', status: 3, signal: null } },
  ]);
});

test("a message that breaks the channel's rule ends the session, saying what came; a refusal too", () => {
  const driver = new Driver();
  const id = driver.connect();
  const end = /** @type {any} */ (Driver.finish(driver.computer(id, [Uint8Array.of(0, 1)])));
  assert.equal(end.failure.kind, 'protocolViolation');
  assert.match(end.failure.message, /^the computer sent a message starting with byte 0x00/);

  const refused = new Driver();
  const other = refused.connect();
  const refusal = /** @type {any} */ (Driver.finish(refused.computer(other, [session({ type: 'refused', stream: 1, reason: 'startFailed', text: 'herdr is not installed' })])));
  assert.deepEqual(refusal.failure, { kind: 'sessionRefused', message: 'the computer refused the session: herdr is not installed' });
  const agents = new Driver((settings) => { settings.attach = { type: 'agent', key: { session: 'default', pane: 'w1:p9' } }; });
  const third = agents.connect();
  const gone = /** @type {any} */ (Driver.finish(agents.computer(third, [session({ type: 'refused', stream: 1, reason: 'unknownAgent', text: 'no agent w1:p9' })])));
  assert.equal(gone.failure.kind, 'agentNotFound');
});

test('a session the computer lost is opened afresh, its input counted from 0 again', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(3);
  const drop = driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'reset' } });
  driver.arrive(drop);
  const second = /** @type {NonNullable<typeof driver.machine.link>} */ (driver.machine.link).id;
  const lost = driver.computer(second, [session({ type: 'refused', stream: 2, reason: 'unknownSession', text: 'herdr-host restarted' })]);
  assert.deepEqual(Driver.events(lost), [{ type: 'attachedAfresh', reason: 'herdr-host restarted' }]);
  assert.deepEqual(Driver.sessionSent(lost), [{ type: 'open', stream: 3, name: 'main', cols: 80, rows: 24, window: WINDOW }]);
  assert.deepEqual(Driver.events(driver.computer(second, [session({ type: 'started', stream: 3, token: TOKEN, offset: 0n, window: WINDOW })])), []);
});

// ## Screen sessions

test('a screen session is opened, drawn, acknowledged, resumed with the input resent, and ended', () => {
  const driver = new Driver((settings) => { settings.screen = true; });
  const id = driver.connect();
  assert.deepEqual(Driver.sessionSent(driver.log), [{ type: 'openScreen', stream: 1, target: ScreenTarget.session('main'), cols: 80, rows: 24 }]);
  assert.deepEqual(Driver.events(driver.computer(id, [session({ type: 'screenStarted', stream: 1, token: TOKEN, inputReceived: 0n })])),
    [{ type: 'started' }]);
  const states = new ScreenStatesForTests(1);
  const first = driver.computer(id, states.messages(screenOf(['$ ']), 0).map(session));
  const drawn = first.flatMap((action) => (action.type === 'draw' ? [action.frame] : []));
  assert.equal(drawn.length, 1);
  assert.equal(TerminalScreen.textOfRow(drawn[0].screen, 0), '$');
  assert.deepEqual(Driver.sessionSent(first), [{ type: 'screenAck', stream: 1, state: 1n }], 'acknowledged as soon as complete, no ping after it');

  // Typed, and the path dies before the computer says it got it all.
  driver.advance(1);
  const typed = driver.handle({ type: 'keys', bytes: utf8('ls') });
  assert.equal(Driver.input(typed), 'ls');
  driver.computer(id, Driver.pings(typed).map((number) => control({ type: 'pong', number })));
  driver.advance(3);
  const drop = driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'reset' } });
  const resumed = driver.arrive(drop);
  const second = /** @type {NonNullable<typeof driver.machine.link>} */ (driver.machine.link).id;
  assert.deepEqual(Driver.sessionSent(resumed), [{ type: 'resumeScreen', stream: 2, token: TOKEN, cols: 80, rows: 24 }]);
  const sent = driver.computer(second, [session({ type: 'screenStarted', stream: 2, token: TOKEN, inputReceived: 1n })]);
  assert.deepEqual(Driver.events(sent), [{ type: 'resumed' }]);
  sent.push(...driver.advance(0.1));
  assert.equal(Driver.input(sent), 's', 'the byte the computer missed goes again');

  // The resume's first state is whole; the exit names the last one.
  const again = new ScreenStatesForTests(2);
  again.lastState = 4n;
  const redrawn = driver.computer(second, again.messages(screenOf(['$ ls']), 0).map(session));
  assert.equal(TerminalScreen.textOfRow(/** @type {any} */ (redrawn.find((action) => action.type === 'draw')).frame.screen, 0), '$ ls');
  const ended = driver.computer(second, [session({ type: 'exit', stream: 2, end: 5n, status: 0, signal: null })]);
  assert.deepEqual(Driver.finish(ended), { type: 'exited', status: 0, signal: null });
  assert.ok(Driver.sessionSent(ended).some((message) => message.type === 'close' && message.stream === 2));
});

test("a scrollback request goes on the session's stream within the frame budget; the answer is handed on", () => {
  const driver = new Driver((settings) => { settings.screen = true; });
  const id = driver.connect();
  const NEWEST = 2n ** 64n - 1n;
  assert.deepEqual(Driver.sent(driver.handle({ type: 'scrollbackRequest', stream: 1, end: NEWEST, count: 100 })), [],
    'not before the session started: the stream is not its yet');
  driver.computer(id, [session({ type: 'screenStarted', stream: 1, token: TOKEN, inputReceived: 0n })]);
  driver.advance(1);
  const asked = driver.handle({ type: 'scrollbackRequest', stream: 1, end: NEWEST, count: 100 });
  assert.deepEqual(Driver.sessionSent(asked), [{ type: 'scrollbackRequest', stream: 1, end: NEWEST, count: 100 }]);
  assert.equal(Driver.pings(asked).length, 1, 'its answer is due: a ping covers it, as keys');
  const scrollback = { stream: 1, first: 4n, oldest: 0n, total: 5n, lines: [[ScreenCell.make('x')]] };
  const answered = driver.computer(id, [session({ type: 'scrollback', scrollback }),
    ...Driver.pings(asked).map((number) => control({ type: 'pong', number }))]);
  assert.deepEqual(answered.filter((action) => action.type === 'scrollback'), [{ type: 'scrollback', scrollback }]);
  assert.ok(!driver.machine.isFinished);

  // Within the frame budget: the request and its ping take the burst; the next waits its turn.
  /** @param {import('../js/device-connection-machine.js').DeviceAction[]} actions */
  const ends = (actions) => Driver.sessionSent(actions).flatMap((message) => (message.type === 'scrollbackRequest' ? [message.end] : []));
  driver.advance(1);
  const burst = driver.handle({ type: 'scrollbackRequest', stream: 1, end: 10n, count: 1 });
  assert.deepEqual([ends(burst), Driver.pings(burst).length], [[10n], 1]);
  assert.deepEqual(ends(driver.handle({ type: 'scrollbackRequest', stream: 1, end: 11n, count: 1 })), []);
  const later = driver.advance(0.1);
  assert.deepEqual(ends(later), [11n]);

  // A request for the stream the session left goes nowhere: its connection is gone.
  driver.arrive(driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'reset' } }));
  const second = /** @type {NonNullable<typeof driver.machine.link>} */ (driver.machine.link).id;
  driver.computer(second, [session({ type: 'screenStarted', stream: 2, token: TOKEN, inputReceived: 0n })]);
  driver.advance(1);
  assert.deepEqual(ends([...driver.handle({ type: 'scrollbackRequest', stream: 1, end: 3n, count: 1 }), ...driver.advance(1)]), []);
  assert.deepEqual(Driver.sessionSent(driver.handle({ type: 'scrollbackRequest', stream: 2, end: 3n, count: 1 })),
    [{ type: 'scrollbackRequest', stream: 2, end: 3n, count: 1 }]);

  // A session of bytes asks for none.
  const bytes = new Driver();
  bytes.started(bytes.connect());
  bytes.advance(1);
  assert.deepEqual(Driver.sent(bytes.handle({ type: 'scrollbackRequest', stream: 1, end: 3n, count: 1 })), []);
});

test('a computer that serves no screen sessions is told before anything is sent; one that breaks them too', () => {
  const driver = new Driver((settings) => { settings.screen = true; });
  driver.handle({ type: 'start' });
  const arrived = driver.handle({ type: 'attemptEnded', id: 1, result: { ok: true, arrival: arrival({ servesScreenSessions: false }) } });
  assert.deepEqual(Driver.sent(arrived), []);
  assert.ok(arrived.some((action) => action.type === 'close' && action.id === 1));
  const end = /** @type {any} */ (Driver.finish(arrived));
  assert.equal(end.failure.kind, 'sessionRefused');
  assert.match(end.failure.message, /serves no screen sessions/);

  const broken = new Driver((settings) => { settings.screen = true; });
  const id = broken.connect();
  broken.computer(id, [session({ type: 'screenStarted', stream: 1, token: TOKEN, inputReceived: 0n })]);
  const states = new ScreenStatesForTests(1);
  states.messages(screenOf(['x']), 0); // state 1, never delivered
  const wrongBase = /** @type {any} */ (Driver.finish(broken.computer(id, states.messages(screenOf(['y']), 0).map(session))));
  assert.equal(wrongBase.failure.kind, 'protocolViolation');
  assert.match(wrongBase.failure.message, /state 1/);

  const bytes = new Driver((settings) => { settings.screen = true; });
  const other = bytes.connect();
  const output = /** @type {any} */ (Driver.finish(bytes.computer(other, [
    session({ type: 'screenStarted', stream: 1, token: TOKEN, inputReceived: 0n }),
    session({ type: 'output', stream: 1, offset: 0n, data: utf8('a') }),
  ])));
  assert.equal(output.failure.kind, 'protocolViolation');
});

// ## The page comes back from the background

test('a page back from the background reconnects at once: a race beside the connection in use, the session moved', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(0.5);
  const back = driver.handle({ type: 'resumed', reason: 'the page came back from the background' });
  assert.equal(Driver.attempts(back).length, 1, 'at once, however short the connection was up');
  const raceID = Driver.attempts(back)[0];
  // The relay gives the new socket the phone's slot: the old one is displaced.
  assert.deepEqual(driver.handle({ type: 'ended', id, failure: { kind: 'displaced' } }), []);
  const moved = driver.handle({ type: 'attemptEnded', id: raceID, result: { ok: true, arrival: arrival() } });
  assert.deepEqual(Driver.events(moved)[0], { type: 'moved', relay: 'relay.test', because: { type: 'resumed', reason: 'the page came back from the background' } });
  assert.deepEqual(Driver.sessionSent(moved), [{ type: 'resume', stream: 2, token: TOKEN, received: 0n, cols: 80, rows: 24, window: WINDOW }]);
  assert.deepEqual(Driver.attempts(driver.handle({ type: 'resumed', reason: 'again' })).length, 1);
});

test('back from the background while waiting between attempts: a free attempt now, the wait kept if it fails', () => {
  const driver = new Driver();
  const id = driver.connect();
  driver.started(id);
  driver.advance(1);
  driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'reset' } });
  const until = /** @type {number} */ (driver.machine.nextWake);
  assert.equal(until, driver.now + 0.5);
  driver.advance(0.1);
  const free = Driver.attempts(driver.handle({ type: 'resumed', reason: 'visible' }));
  assert.equal(free.length, 1);
  driver.handle({ type: 'attemptEnded', id: free[0], result: { ok: false, failure: { kind: 'unavailable', why: 'still down' } } });
  assert.equal(driver.machine.nextWake, until, 'the wait goes on where it was; the attempt counted toward nothing');
  assert.equal(driver.machine.retry.attempt, 1);

  const connecting = new Driver();
  connecting.handle({ type: 'start' });
  const redo = connecting.handle({ type: 'resumed', reason: 'visible' });
  assert.deepEqual(redo, [{ type: 'cancel', id: 1 }, { type: 'connect', id: 2 }], 'an attempt frozen half-way is made again');
  assert.deepEqual(connecting.handle({ type: 'attemptEnded', id: 1, result: { ok: true, arrival: arrival() } }), [{ type: 'close', id: 1 }]);
});

test('a resize before the session starts sizes its attach; after, it goes as a resize covered by a ping', () => {
  const driver = new Driver();
  driver.handle({ type: 'start' });
  driver.handle({ type: 'resize', cols: 100, rows: 5000 });
  const up = driver.handle({ type: 'attemptEnded', id: 1, result: { ok: true, arrival: arrival() } });
  assert.deepEqual(Driver.sessionSent(up), [{ type: 'open', stream: 1, name: 'main', cols: 100, rows: 1000, window: WINDOW }],
    'the size clamped to 1–1000');
  driver.started(1);
  driver.advance(1);
  const resized = driver.handle({ type: 'resize', cols: 0, rows: 30 });
  assert.deepEqual(Driver.sessionSent(resized), [{ type: 'resize', stream: 1, cols: 1, rows: 30 }]);
  assert.equal(Driver.pings(resized).length, 1);
});

test("an agent's pane as a screen session: open screen with the agent target, resumed by its token", () => {
  const driver = new Driver((settings) => {
    settings.screen = true;
    settings.attach = { type: 'agent', key: { session: 'work', pane: 'w1:p2' } };
  });
  const id = driver.connect();
  assert.deepEqual(Driver.sessionSent(driver.log), [{ type: 'openScreen', stream: 1, target: ScreenTarget.agent('work', 'w1:p2'), cols: 80, rows: 24 }]);
  driver.computer(id, [session({ type: 'screenStarted', stream: 1, token: TOKEN, inputReceived: 0n })]);
  driver.advance(3);
  const again = driver.arrive(driver.handle({ type: 'ended', id, failure: { kind: 'unavailable', why: 'reset' } }));
  assert.deepEqual(Driver.sessionSent(again), [{ type: 'resumeScreen', stream: 2, token: TOKEN, cols: 80, rows: 24 }]);
  const other = new Driver((settings) => { settings.screen = true; });
  const second = other.connect();
  other.computer(second, [session({ type: 'screenStarted', stream: 1, token: TOKEN, inputReceived: 0n })]);
  other.advance(3);
  other.arrive(other.handle({ type: 'ended', id: second, failure: { kind: 'unavailable', why: 'reset' } }));
  const third = /** @type {NonNullable<typeof other.machine.link>} */ (other.machine.link).id;
  const wrong = /** @type {any} */ (Driver.finish(other.computer(third, [session({ type: 'screenStarted', stream: 2, token: new Uint8Array(16), inputReceived: 0n })])));
  assert.equal(wrong.failure.kind, 'protocolViolation');
  assert.match(wrong.failure.message, /resumed another session/);
});
