// docs/companion.md, "A worked example": every application message of the pairing, the session
// of bytes and the screen session, read from the document itself at test time (the backquoted
// JSON of a control message, or the hex of a session message, on each `computer → device` and
// `device → computer` line, and the credit the text says the device would have sent). Each is
// parsed by the channel's one rule, its fields checked against what the text says, and encoded
// again to the same bytes. (noise-vectors.test.js reproduces the frames that carry them.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ChannelMessage } from '../js/channel-message.js';
import { HomeAddress } from '../js/home-address.js';
import { ScreenReplica } from '../js/screen-replica.js';
import { TerminalScreen } from '../js/terminal-screen.js';
import { TerminalColor } from '../js/terminal-color.js';
import { CellStyle } from '../js/cell-style.js';
import { ScreenModes } from '../js/screen-modes.js';
import { fromHex, toHex, utf8 } from '../js/bytes.js';

/** @typedef {import('../js/channel-message.js').ChannelMessage} ChannelMessageValue */
/** @typedef {import('../js/screen-update.js').ScreenUpdate} ScreenUpdate */

/** @typedef {{direction: 'computer → device' | 'device → computer', bytes: Uint8Array, line: string}} DocumentedMessage */

/**
 * The application messages of the worked example, in order.
 * @returns {DocumentedMessage[]}
 */
function documentedMessages() {
  const text = readFileSync(new URL('../../docs/companion.md', import.meta.url), 'utf8');
  const start = text.indexOf('<!-- worked example');
  const end = text.indexOf('<!-- end of the worked example -->');
  assert.ok(start > 0 && end > start, 'docs/companion.md has its worked example');
  /** @type {DocumentedMessage[]} */
  const messages = [];
  for (const line of text.slice(start, end).split('\n')) {
    const arrow = /^- (computer → device|device → computer), /.exec(line);
    const credit = /would have been `([0-9a-f ]+)`/.exec(line);
    const quoted = Array.from(line.matchAll(/`([^`]*)`/g), (match) => match[1]);
    if (arrow !== null) {
      const direction = /** @type {DocumentedMessage['direction']} */ (arrow[1]);
      const json = quoted.find((part) => part.startsWith('{'));
      const hex = quoted.filter((part) => /^[0-9a-f]{2}( ?[0-9a-f]{2})*$/.test(part) && part.includes(' ')).pop();
      assert.ok(json !== undefined || hex !== undefined, `a message on: ${line}`);
      const bytes = json !== undefined ? utf8(json) : fromHex(/** @type {string} */ (hex).replace(/ /g, ''));
      messages.push({ direction, bytes, line });
    } else if (credit !== null) {
      messages.push({ direction: 'device → computer', bytes: fromHex(credit[1].replace(/ /g, '')), line });
    }
  }
  return messages;
}

const ROOM_SECRET = new Uint8Array(32).fill(0x08);
const SESSION_TOKEN = new Uint8Array(16).fill(0x0b);
const SCREEN_TOKEN = new Uint8Array(16).fill(0x10);
const FOUR_MIB = 4 * 1024 * 1024;

/** @param {import('../js/companion-message.js').CompanionMessage} message @returns {ChannelMessageValue} */
const control = (message) => ({ type: 'control', message });
/** @param {import('../js/session-message.js').SessionMessage} message @returns {ChannelMessageValue} */
const session = (message) => ({ type: 'session', message });

/**
 * A screen update's header, as the text states it.
 * @param {{state: bigint, base: bigint, input: bigint, last: boolean, cursor: [number, number], title: string | null}} fields
 * @returns {(update: ScreenUpdate) => void}
 */
function header(fields) {
  return (update) => {
    assert.equal(update.stream, 3);
    assert.equal(update.state, fields.state);
    assert.equal(update.base, fields.base);
    assert.equal(update.inputBytes, fields.input);
    assert.equal(update.isLastPart, fields.last);
    assert.equal(update.columns, 20);
    assert.equal(update.rows, 4);
    assert.deepEqual(update.cursor, { row: fields.cursor[0], column: fields.cursor[1], visible: true });
    assert.deepEqual(update.modes, ScreenModes.make(), 'modes 1: the cursor visible and nothing else, mouse 0');
    assert.equal(update.bells, 0);
    assert.equal(update.scroll, 0);
    assert.equal(update.title, fields.title);
  };
}

/**
 * A row entry as the text states it: its index, column, whether it keeps the rest, and its runs
 * (each its text and style).
 * @param {ScreenUpdate} update
 * @param {[index: number, column: number, keepsRest: boolean, runs: [string, import('../js/cell-style.js').CellStyle][]][]} rows
 */
function rowsOf(update, rows) {
  assert.equal(update.lines.length, rows.length);
  update.lines.forEach((entry, i) => {
    const [index, column, keepsRest, runs] = rows[i];
    assert.equal(entry.index, index);
    assert.equal(entry.column, column);
    assert.equal(entry.keepsRest, keepsRest);
    let at = 0;
    for (const [text, style] of runs) {
      for (const character of text) {
        const cell = entry.cells[at++];
        assert.equal(cell.text, character);
        assert.equal(cell.width, 1);
        assert.ok(CellStyle.equal(cell.style, style), `row ${index}, cell ${at}: its style`);
      }
    }
    assert.equal(at, entry.cells.length);
  });
}

const PLAIN = CellStyle.plain;
const BOLD_BLUE = CellStyle.make({ foreground: TerminalColor.indexed(4), flags: CellStyle.flags.bold });

/**
 * What the text says of each message, in order: the value it parses to, or a check of the
 * screen update it carries.
 * @type {[DocumentedMessage['direction'], ChannelMessageValue | ((update: ScreenUpdate) => void)][]}
 */
const EXPECTED = [
  // One pairing.
  ['computer → device', control({ type: 'pairing', accepted: true })],
  ['device → computer', control({ type: 'status', status: { name: 'phone', roomSecret: ROOM_SECRET, registered: false } })],
  ['computer → device', control({ type: 'home', addresses: [HomeAddress.parse('[fd00::7]:4610')] })],
  ['computer → device', control({ type: 'statusAcknowledged' })],
  ['device → computer', control({ type: 'registered' })],
  // One session.
  ['device → computer', control({ type: 'status', status: { name: 'phone', roomSecret: ROOM_SECRET, registered: true } })],
  ['computer → device', control({ type: 'serves', served: new Map([['screen', 1]]) })],
  ['computer → device', control({ type: 'statusAcknowledged' })],
  ['computer → device', control({ type: 'home', addresses: [HomeAddress.parse('[fd00::7]:4610')] })],
  ['device → computer', session({ type: 'open', stream: 1, name: null, cols: 80, rows: 24, window: FOUR_MIB })],
  ['computer → device', session({ type: 'started', stream: 1, token: SESSION_TOKEN, offset: 0n, window: FOUR_MIB })],
  ['device → computer', control({ type: 'window', stream: 1, bytes: 262144 })],
  ['computer → device', session({ type: 'output', stream: 1, offset: 0n, data: utf8('$ ') })],
  ['device → computer', session({ type: 'input', stream: 1, data: utf8('exit\r') })],
  ['device → computer', control({ type: 'ping', number: 1 })],
  ['computer → device', control({ type: 'pong', number: 1 })],
  ['computer → device', session({ type: 'output', stream: 1, offset: 2n, data: utf8('exit\r\n') })],
  ['computer → device', session({ type: 'exit', stream: 1, end: 8n, status: 0, signal: null })],
  ['device → computer', session({ type: 'close', stream: 1 })],
  ['device → computer', session({ type: 'credit', stream: 1, consumed: 64n * 1024n })],
  // One screen session.
  ['device → computer', session({ type: 'openScreen', stream: 3, target: { kind: 'session', name: null }, cols: 20, rows: 4 })],
  ['computer → device', session({ type: 'screenStarted', stream: 3, token: SCREEN_TOKEN, inputReceived: 0n })],
  ['computer → device', (update) => {
    header({ state: 1n, base: 0n, input: 0n, last: true, cursor: [0, 2], title: '~' })(update);
    rowsOf(update, [[0, 0, false, [['$ ', PLAIN]]]]);
  }],
  ['device → computer', session({ type: 'screenAck', stream: 3, state: 1n })],
  ['device → computer', session({ type: 'input', stream: 3, data: utf8('ls\r') })],
  ['computer → device', (update) => {
    header({ state: 2n, base: 1n, input: 0n, last: true, cursor: [2, 2], title: null })(update);
    rowsOf(update, [
      [0, 2, false, [['ls', PLAIN]]],
      [1, 0, false, [['notes.txt  ', PLAIN], ['src', BOLD_BLUE]]],
      [2, 0, false, [['$ ', PLAIN]]],
    ]);
  }],
  ['computer → device', (update) => {
    header({ state: 3n, base: 2n, input: 3n, last: true, cursor: [2, 2], title: null })(update);
    rowsOf(update, []);
  }],
  ['device → computer', session({ type: 'screenAck', stream: 3, state: 3n })],
  ['device → computer', session({ type: 'close', stream: 3 })],
];

test('docs/companion.md worked example: every application message parses to what the text says and encodes to its bytes', () => {
  const documented = documentedMessages();
  assert.equal(documented.length, EXPECTED.length, 'one expectation for each message the example shows');
  documented.forEach(({ direction, bytes, line }, index) => {
    const [expectedDirection, expected] = EXPECTED[index];
    assert.equal(direction, expectedDirection, line);
    const parsed = ChannelMessage.parse(bytes);
    if (typeof expected === 'function') {
      assert.equal(parsed.type, 'session', line);
      const message = parsed.type === 'session' ? parsed.message : null;
      assert.ok(message !== null && message.type === 'screen', line);
      expected(message.update);
    } else {
      assert.deepEqual(parsed, expected, line);
      // What the device sends, it writes exactly as the document shows.
      assert.equal(toHex(ChannelMessage.encode(expected)), toHex(bytes), line);
    }
    assert.equal(toHex(ChannelMessage.encode(parsed)), toHex(bytes), `encoded again: ${line}`);
  });
});

test('docs/companion.md worked example: the screen session drawn by the replica', () => {
  const replica = new ScreenReplica();
  /** @type {import('../js/screen-replica.js').ScreenReplicaOutcome[]} */
  const outcomes = [];
  for (const { bytes } of documentedMessages()) {
    const parsed = ChannelMessage.parse(bytes);
    if (parsed.type === 'session' && parsed.message.type === 'screen') outcomes.push(replica.apply(parsed.message.update));
  }
  assert.deepEqual(outcomes, [
    { kind: 'complete', state: 1n, rang: false },
    { kind: 'complete', state: 2n, rang: false },
    { kind: 'complete', state: 3n, rang: false },
  ]);
  const screen = replica.screen;
  assert.deepEqual([0, 1, 2, 3].map((row) => TerminalScreen.textOfRow(screen, row)), ['$ ls', 'notes.txt  src', '$', '']);
  assert.equal(screen.title, '~', 'the title of the whole state stays');
  assert.deepEqual(screen.cursor, { row: 2, column: 2, visible: true });
  assert.ok(CellStyle.equal(screen.lines[1][11].style, BOLD_BLUE) && screen.lines[1][11].text === 's');
  assert.equal(replica.state, 3n);
  assert.equal(replica.inputBytes, 3n, 'the last state confirms the three bytes typed');
});
