// DeviceSession (device-session.js) alone: a screen session's `scrollback` answers are passed up
// to the page (whose ScrollbackHistory judges them), on its own stream only, once it started; a
// session of bytes gets none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeviceSession } from '../js/device-session.js';
import { ScreenCell } from '../js/screen-cell.js';

/** @typedef {import('../js/scrollback-lines.js').ScrollbackLines} ScrollbackLines */

const TOKEN = new Uint8Array(16).fill(7);

/**
 * @param {number} stream
 * @returns {ScrollbackLines}
 */
const lines = (stream) => ({ stream, first: 4n, oldest: 0n, total: 6n, lines: [[ScreenCell.make('a')], [ScreenCell.make('b')]] });

/** A screen session started on stream 1. */
function started() {
  const session = new DeviceSession({ type: 'session', name: null }, { screen: true });
  session.attachMessage(80, 24);
  assert.deepEqual(session.receive({ type: 'screenStarted', stream: 1, token: TOKEN, inputReceived: 0n }), { type: 'started', kind: 'first' });
  return session;
}

test("a screen session passes the computer's scrollback up as it came", () => {
  const session = started();
  const scrollback = lines(1);
  assert.deepEqual(session.receive({ type: 'scrollback', scrollback }), { type: 'scrollback', scrollback });
  // After a resume on stream 2, the old stream's answers are left; the new one's passed up.
  session.attachMessage(80, 24);
  session.receive({ type: 'screenStarted', stream: 2, token: TOKEN, inputReceived: 0n });
  assert.deepEqual(session.receive({ type: 'scrollback', scrollback: lines(1) }), { type: 'none' });
  assert.deepEqual(session.receive({ type: 'scrollback', scrollback: lines(2) }), { type: 'scrollback', scrollback: lines(2) });
});

test('scrollback before the screen session started, or to a session of bytes, breaks the protocol', () => {
  const waiting = new DeviceSession({ type: 'session', name: null }, { screen: true });
  waiting.attachMessage(80, 24);
  assert.deepEqual(waiting.receive({ type: 'scrollback', scrollback: lines(1) }),
    { type: 'broken', why: 'scrollback came before the session started' });

  const bytes = new DeviceSession({ type: 'session', name: null });
  bytes.attachMessage(80, 24);
  bytes.receive({ type: 'started', stream: 1, token: TOKEN, offset: 0n, window: 4 * 1024 * 1024 });
  assert.equal(bytes.receive({ type: 'scrollback', scrollback: lines(1) }).type, 'broken');
});
