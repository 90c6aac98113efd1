// The device's connection end to end in memory: DeviceConnection (the machine, the attempts, the
// channels) against herdr-host's side played by test-support/simulated-computer.js through the
// in-memory relay, with a fake clock: the signed join, the status, `serves` and the ack; a
// session of bytes and a screen session opened, typed into, drawn and acknowledged; a path that
// dies and the session resumed on a new connection with the input sent again; the backoff when
// the computer is gone; the page back from the background; refusals in words.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedWorld, deviceIn } from '../test-support/paired-world.js';
import { until, untilAdvancing } from '../test-support/fake-clock.js';
import { ScreenStatesForTests } from '../test-support/screen-states.js';
import { TerminalScreen } from '../js/terminal-screen.js';
import { ScreenCell } from '../js/screen-cell.js';
import { RelayTranscript } from '../js/relay-join.js';
import { RelayJSON } from '../js/relay-json.js';
import { HerdrAgent } from '../js/herdr-agent.js';
import { HerdrAvailability } from '../js/herdr-session-info.js';
import { utf8 } from '../js/bytes.js';

/**
 * A screen with `text` on its first row.
 * @param {string} text
 */
function screenOf(text) {
  const lines = TerminalScreen.blankLines(80, 24);
  Array.from(text).forEach((character, column) => { lines[0][column] = ScreenCell.make(character); });
  return TerminalScreen.make(lines, { row: 0, column: Array.from(text).length, visible: true });
}

/** @param {{type: string}[]} events */
const types = (events) => events.map((event) => event.type);

/**
 * A channel message's name: its control message's or session message's type.
 * @param {import('../js/channel-message.js').ChannelMessage} message
 */
const nameOf = (message) => (message.type === 'agents' ? 'agents' : message.message.type);

test('a connection: a signed join, the status, serves and the ack; a session of bytes typed into, echoed, ended', async () => {
  const world = await pairedWorld();
  world.computer.park();
  await until(() => world.computer.parks === 1, 'the computer parks');
  const { device, events, text } = deviceIn(world);
  device.start();
  await until(() => types(events).includes('started'), 'the session starts');
  assert.deepEqual(types(events), ['connected', 'homeAddresses', 'started']);
  // The join was signed over the transcript with the join key; the relay checked it against V.
  const join = world.relay.admissions[1];
  const nonce = /** @type {Uint8Array} */ (RelayJSON.bytes(JSON.parse(join.texts[1]).nonce));
  const signature = /** @type {Uint8Array} */ (RelayJSON.bytes(JSON.parse(join.texts[2]).sig));
  const key = await crypto.subtle.importKey('raw', world.joinKey.verifier, { name: 'Ed25519' }, false, ['verify']);
  assert.ok(await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, RelayTranscript.join('phone', nonce, world.room, world.relay.origin)));
  const first = world.computer.received[0];
  assert.ok(first.type === 'control' && first.message.type === 'status' && first.message.status.registered &&
    first.message.status.name === 'phone', 'the status first, registered');
  assert.deepEqual(world.computer.received.map(nameOf).slice(0, 3), ['status', 'open', 'window']);

  const session = /** @type {import('../test-support/simulated-computer.js').HostSession} */ (world.computer.sessionOn(1));
  world.computer.sendSession({ type: 'output', stream: 1, offset: 0n, data: utf8('$ ') });
  await until(() => text() === '$ ', 'the prompt is written');
  device.send(utf8('exit\r'));
  await untilAdvancing(world.clock, () => session.input === 'exit\r', 'the keys reach the computer');
  await untilAdvancing(world.clock, () => nameOf(/** @type {any} */ (world.computer.received.at(-1))) === 'ping', 'a ping covers the keys');
  world.computer.sendSession({ type: 'output', stream: 1, offset: 2n, data: utf8('exit\r\n') });
  world.computer.sendSession({ type: 'exit', stream: 1, end: 8n, status: 0, signal: null });
  await until(() => types(events).includes('finished') && nameOf(/** @type {any} */ (world.computer.received.at(-1))) === 'close',
    'the session ends, its exit answered');
  assert.equal(text(), '$ exit\r\n');
  assert.deepEqual(events.at(-1), { type: 'finished', termination: { type: 'exited', status: 0, signal: null } });
  const last = world.computer.received.at(-1);
  assert.ok(last?.type === 'session' && last.message.type === 'close' && last.message.stream === 1, 'the exit answered with close');
});

test('the first connection of an unregistered pairing registers the room and says so', async () => {
  const world = await pairedWorld({ registered: false });
  world.computer.park();
  await until(() => world.computer.parks === 1, 'the computer parks');
  const { device, events } = deviceIn(world);
  device.start();
  await until(() => types(events).includes('started'), 'the session starts');
  assert.deepEqual(types(events).slice(0, 2), ['registered', 'connected']);
  assert.deepEqual(world.relay.room(world.room).verifier, world.joinKey.verifier);
  assert.ok(world.computer.received.some((message) => message.type === 'control' && message.message.type === 'registered'));
});

test('a screen session opened, drawn, typed into and acknowledged; the path dies, the session resumes, the input goes again', async () => {
  const world = await pairedWorld();
  world.computer.park();
  await until(() => world.computer.parks === 1, 'the computer parks');
  const { device, events, screens } = deviceIn(world, { screen: true });
  /** @type {ScreenStatesForTests | null} */
  let states = null;
  world.computer.onSession = (message, computer) => {
    if (message.type === 'openScreen' || message.type === 'resumeScreen') {
      // After its `screen started`, the whole screen as the first state of the connection.
      setTimeout(() => {
        const session = /** @type {NonNullable<ReturnType<typeof computer.sessionOn>>} */ (computer.sessionOn(message.stream));
        if (states === null) states = new ScreenStatesForTests(message.stream);
        states.stream = message.stream;
        states.restart();
        for (const part of states.messages(screenOf(`$ ${session.input}`), 0, session.inputReceived)) computer.sendSession(part);
      }, 0);
    }
    return false;
  };
  device.start();
  await until(() => screens.length === 1, 'the first screen is drawn');
  assert.equal(TerminalScreen.textOfRow(screens[0].screen, 0), '$');
  await until(() => world.computer.received.some((message) => message.type === 'session' && message.message.type === 'screenAck'),
    'the screen is acknowledged');

  // Typed, and delivered: the computer draws it and the device acknowledges the new state.
  device.send(utf8('ls'));
  const session = /** @type {NonNullable<ReturnType<typeof world.computer.sessionOn>>} */ (world.computer.sessionOn(1));
  await untilAdvancing(world.clock, () => session.input === 'ls', 'the keys arrive');
  const current = /** @type {ScreenStatesForTests} */ (/** @type {unknown} */ (states));
  for (const part of current.messages(screenOf('$ ls'), 0, 2n)) world.computer.sendSession(part);
  await until(() => screens.length === 2, 'the echo is drawn');
  assert.equal(TerminalScreen.textOfRow(screens[1].screen, 0), '$ ls');
  assert.equal(screens[1].inputBytes, 2n);
  await untilAdvancing(world.clock, () => world.computer.received.filter((message) => message.type === 'session' && message.message.type === 'screenAck').length === 2, 'state 2 acknowledged');

  // The device's path dies without a word; keys typed into it never arrive.
  await world.clock.advance(3);
  const socket = /** @type {import('../js/frame-pipe.js').RelaySocket} */ (world.relay.holder(world.room, 'phone'));
  world.relay.silence(socket);
  const diedAt = world.clock.now();
  device.send(utf8(' -l'));
  const socketsBefore = world.opened.length;
  await untilAdvancing(world.clock, () => world.opened.length > socketsBefore, 'a race for a fresh connection');
  const racedAt = world.opened[world.opened.length - 1];
  assert.ok(Math.abs(racedAt - diedAt - 1) < 0.05, `a ping out and nothing heard for 1 s: raced at +${racedAt - diedAt}`);
  await untilAdvancing(world.clock, () => types(events).includes('moved'), 'the session moves to the new connection');
  const moved = /** @type {any} */ (events.find((event) => event.type === 'moved'));
  assert.equal(moved.because.type, 'pathWentQuiet');
  await untilAdvancing(world.clock, () => session.input === 'ls -l', 'the lost keys sent again, once');
  assert.equal(world.computer.resplices, 1, `the computer answered the new handshake on its socket (parks ${world.computer.parks}, handshakes ${world.computer.handshakes})`);
  const resumes = world.computer.received.filter((message) => message.type === 'session' && message.message.type === 'resumeScreen');
  assert.equal(resumes.length, 1);
  await until(() => screens.length === 3, 'the whole screen again after the resume');
  assert.equal(TerminalScreen.textOfRow(screens[2].screen, 0), '$ ls -l');
  device.cancel();
  await until(() => types(events).includes('finished'), 'cancelled');
  assert.deepEqual(events.at(-1), { type: 'finished', termination: { type: 'cancelled' } });
});

test("a screen session's scrollback: asked for on the session's stream, the computer's answer handed to the page", async () => {
  const world = await pairedWorld();
  world.computer.park();
  await until(() => world.computer.parks === 1, 'the computer parks');
  const { device, events, scrollbacks } = deviceIn(world, { screen: true });
  /** @type {import('../js/session-message.js').SessionMessage[]} */
  const asked = [];
  world.computer.onSession = (message, computer) => {
    if (message.type !== 'scrollbackRequest') return false;
    asked.push(message);
    // Lines 0–41 scrolled off; the newest two before min(end, total), as herdr-host answers.
    computer.sendSession({ type: 'scrollback', scrollback: {
      stream: message.stream, first: 40n, oldest: 0n, total: 42n, lines: [[ScreenCell.make('a')], [ScreenCell.make('b')]],
    } });
    return true;
  };
  assert.equal(device.sessionStream, null, 'not running yet');
  device.start();
  await until(() => types(events).includes('started'), 'the session starts');
  assert.equal(device.sessionStream, 1);
  assert.throws(() => device.requestScrollback({ stream: 1, end: 42n, count: 0 }), RangeError);
  assert.throws(() => device.requestScrollback({ stream: 1, end: 42n, count: 1001 }), RangeError);
  device.requestScrollback({ stream: 1, end: 2n ** 64n - 1n, count: 2 });
  await untilAdvancing(world.clock, () => scrollbacks.length === 1, 'the answer comes back');
  assert.deepEqual(asked, [{ type: 'scrollbackRequest', stream: 1, end: 2n ** 64n - 1n, count: 2 }]);
  assert.deepEqual(scrollbacks[0].lines.map((line) => line[0].text), ['a', 'b']);
  assert.deepEqual([scrollbacks[0].first, scrollbacks[0].total], [40n, 42n]);
  assert.ok(!device.isFinished);
  device.cancel();
});

test('the computer gone: at once, then quick retries while it may be between parks, then the backoff ladder', async () => {
  const world = await pairedWorld();
  world.computer.park();
  await until(() => world.computer.parks === 1, 'the computer parks');
  const { device, events } = deviceIn(world);
  device.start();
  await until(() => types(events).includes('started'), 'the session starts');
  await world.clock.advance(3);
  world.computer.stop();
  const before = world.opened.length;
  const goneAt = world.clock.now();
  await untilAdvancing(world.clock, () => world.opened.length >= before + 9, 'nine attempts', { step: 0.01, seconds: 30 });
  const at = world.opened.slice(before).map((time) => Math.round((time - goneAt) * 1000) / 1000);
  // At once (up 3 s); then `mac offline`: 0.02, 0.05, 0.1, 0.25, 0.5 and 1 s (quick retries); then 1 s, 2 s.
  const gaps = at.map((time, i) => Math.round((time - (i === 0 ? 0 : at[i - 1])) * 100) / 100);
  assert.deepEqual(gaps, [0, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 1, 2]);
  assert.ok(types(events).filter((type) => type === 'reconnecting').length >= 2);
  assert.ok(!device.isFinished);
});

test('back from the background: a fresh connection at once, the session resumed on it', async () => {
  const world = await pairedWorld();
  world.computer.park();
  await until(() => world.computer.parks === 1, 'the computer parks');
  const { device, events } = deviceIn(world);
  device.start();
  await until(() => types(events).includes('started'), 'the session starts');
  const before = world.opened.length;
  device.resumed('the page came back from the background');
  assert.equal(world.opened.length, before + 1, 'the socket opens at once, not at a tick');
  await untilAdvancing(world.clock, () => types(events).includes('resumed'), 'the session resumes');
  const moved = /** @type {any} */ (events.find((event) => event.type === 'moved'));
  assert.deepEqual(moved.because, { type: 'resumed', reason: 'the page came back from the background' });
});

test('the agents board on a connection that attaches nothing; an agent opened from it', async () => {
  const world = await pairedWorld();
  world.computer.park();
  await until(() => world.computer.parks === 1, 'the computer parks');
  const agent = HerdrAgent.make({ session: 'default', pane: 'w1:p2' }, { name: 'claude-2', kind: 'claude', status: 'blocked', title: 'Approve edit?' });
  let sequence = 0;
  world.computer.onSession = () => false;
  const { device, events } = deviceIn(world, { attach: null, watchAgents: true, boardWait: { seconds: 10, failure: { kind: 'agentsUnavailable', message: 'no board' } } });
  device.start();
  await until(() => world.computer.received.some((message) => message.type === 'control' && message.message.type === 'agents'), 'the watch');
  world.computer.send({ type: 'agents', message: {
    sequence: ++sequence, kind: { kind: 'full', part: 1, parts: 1 }, herdr: HerdrAvailability.make('ready'), sessions: [], omitted: 0,
    agents: [agent], removed: [],
  } });
  await until(() => types(events).includes('agents'), 'the board');
  const board = /** @type {any} */ (events.find((event) => event.type === 'agents')).board;
  assert.deepEqual([...board.agents.values()], [agent]);
  device.open({ type: 'agent', key: agent.key });
  await until(() => types(events).includes('started'), 'the agent pane opens');
  assert.ok(world.computer.received.some((message) => message.type === 'session' && message.message.type === 'openAgent' &&
    message.message.pane === 'w1:p2'));
});

test('refusals in words: the pairing gone, a computer without screen sessions, an agent not there', async () => {
  const gone = await pairedWorld();
  gone.computer.park();
  await until(() => gone.computer.parks === 1, 'the computer parks');
  gone.relay.room(gone.room).verifier = crypto.getRandomValues(new Uint8Array(32)); // another pairing's room now
  const first = deviceIn(gone);
  first.device.start();
  await until(() => first.device.isFinished, 'the device gives up');
  const end = /** @type {any} */ (first.events.at(-1));
  assert.equal(end.termination.failure.kind, 'pairingGone');
  assert.match(end.termination.failure.message, /the pairing was removed on the computer, or it expired \(bad signature\); pair again/);

  const old = await pairedWorld({ computer: { servesScreens: false } });
  old.computer.park();
  await until(() => old.computer.parks === 1, 'the computer parks');
  const screen = deviceIn(old, { screen: true });
  screen.device.start();
  await until(() => screen.device.isFinished, 'the device ends');
  assert.match(/** @type {any} */ (screen.events.at(-1)).termination.failure.message, /serves no screen sessions/);

  const agents = await pairedWorld();
  agents.computer.park();
  await until(() => agents.computer.parks === 1, 'the computer parks');
  agents.computer.onSession = (message, computer) => {
    if (message.type !== 'openAgent') return false;
    computer.sendSession({ type: 'refused', stream: message.stream, reason: 'unknownAgent', text: 'no agent w1:p9 in herdr session default on this computer' });
    return true;
  };
  const missing = deviceIn(agents, { attach: { type: 'agent', key: { session: 'default', pane: 'w1:p9' } } });
  missing.device.start();
  await until(() => missing.device.isFinished, 'refused');
  assert.deepEqual(/** @type {any} */ (missing.events.at(-1)).termination.failure, {
    kind: 'agentNotFound', message: 'the computer refused the session: no agent w1:p9 in herdr session default on this computer',
  });
});
