// The session protocol's messages of a session of bytes (docs/companion.md, "The session
// protocol"): every one's bytes round trip, the layout is big-endian, and every bound of the
// parser refuses with its kind, as Tests/CompanionTests/SessionProtocolTests.swift checks the
// Swift side.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionMessage, SessionMessageType } from '../js/session-message.js';
import { SessionMessageError, SessionLimits } from '../js/session-wire.js';
import { ChannelMessage } from '../js/channel-message.js';
import { concatBytes, utf8 } from '../js/bytes.js';

/** @typedef {import('../js/session-message.js').SessionMessage} Message */
/** @typedef {import('../js/session-wire.js').SessionMessageErrorKind} Kind */

const token = Uint8Array.from({ length: 16 }, (_, i) => (i * 17 + 3) & 0xff);
const otherToken = new Uint8Array(16).fill(0xee);
const U64_MAX = 0xffffffffffffffffn;
const U32_MAX = 0xffffffff;

/**
 * One of every message, with edge values where a field has bounds.
 * @type {Message[]}
 */
const samples = [
  { type: 'open', stream: 1, name: 'work', cols: 80, rows: 24, window: 4 * 1024 * 1024 },
  { type: 'open', stream: U32_MAX, name: null, cols: 1000, rows: 1, window: 4 * 1024 },
  { type: 'open', stream: 0, name: 'n'.repeat(64), cols: 1, rows: 1000, window: 64 * 1024 * 1024 },
  { type: 'open', stream: 2, name: 'a.b_c-D9', cols: 2, rows: 3, window: 5000 },
  { type: 'resume', stream: 7, token, received: 0x0102030405060708n, cols: 120, rows: 40, window: 64 * 1024 * 1024 },
  { type: 'resume', stream: 0, token: otherToken, received: U64_MAX, cols: 1, rows: 1, window: 4 * 1024 },
  { type: 'started', stream: 2, token, offset: 12345n, window: 4096 },
  { type: 'started', stream: U32_MAX, token: otherToken, offset: 0n, window: 4096 },
  { type: 'output', stream: 3, offset: U64_MAX - 10n, data: Uint8Array.of(0, 1, 0x7b, 255) },
  { type: 'output', stream: 3, offset: 0n, data: new Uint8Array(0) },
  { type: 'output', stream: 3, offset: 42n, data: new Uint8Array(SessionLimits.maximumData).fill(0xa5) },
  { type: 'input', stream: 4, data: utf8('ls -l\r') },
  { type: 'input', stream: 4, data: new Uint8Array(0) },
  { type: 'input', stream: 4, data: new Uint8Array(SessionLimits.maximumLength - 5).fill(0x5a) },
  { type: 'resize', stream: 5, cols: 1, rows: 1000 },
  { type: 'resize', stream: 5, cols: 1000, rows: 1 },
  { type: 'credit', stream: 6, consumed: 1n << 40n },
  { type: 'credit', stream: 6, consumed: 0n },
  { type: 'endOfInput', stream: 8 },
  { type: 'close', stream: 9 },
  { type: 'exit', stream: 10, end: 99n, status: 0, signal: null },
  { type: 'exit', stream: 10, end: 0n, status: -1, signal: 'KILL' },
  { type: 'exit', stream: 10, end: U64_MAX, status: -0x80000000, signal: null },
  { type: 'exit', stream: 11, end: 5n, status: null, signal: 'S'.repeat(32) },
  { type: 'exit', stream: 11, end: 5n, status: null, signal: null },
  { type: 'refused', stream: 12, reason: 'other', text: 't'.repeat(1024) },
  { type: 'refused', stream: 12, reason: 'unknownSession', text: 'ünïcødé ✓ 🙂' },
  ...(/** @type {const} */ (['unknownSession', 'resumePointLost', 'startFailed', 'tooManySessions', 'unknownAgent', 'other']))
    .map((reason) => /** @type {Message} */ ({ type: 'refused', stream: 13, reason, text: '' })),
  { type: 'openAgent', stream: 14, session: 'default', pane: 'w1:p2', cols: 80, rows: 24, window: 65536 },
];

/**
 * Parses `bytes` expecting a refusal; returns its kind.
 * @param {Uint8Array} bytes
 * @returns {Kind | null} null when the bytes parsed
 */
function refusal(bytes) {
  try {
    SessionMessage.parse(bytes);
    return null;
  } catch (error) {
    assert.ok(error instanceof SessionMessageError, `a SessionMessageError, not ${error}`);
    return error.kind;
  }
}

/** @param {Uint8Array} bytes @param {Kind} [kind] @param {string} [what] */
function refuses(bytes, kind, what) {
  const got = refusal(bytes);
  assert.notEqual(got, null, `refused: ${what ?? ''}`);
  if (kind !== undefined) assert.equal(got, kind, what);
}

/** @param {...(number[] | Uint8Array)} parts */
const bytesOf = (...parts) => concatBytes(...parts.map((part) => Uint8Array.from(part)));

test('session messages: every message round trips through the channel and keeps its stream', () => {
  const types = new Set();
  for (const message of samples) {
    const bytes = SessionMessage.encode(message);
    assert.ok(bytes.length <= SessionLimits.maximumLength);
    assert.equal(ChannelMessage.kindOf(bytes), 'session');
    assert.deepEqual(ChannelMessage.parse(bytes), { type: 'session', message });
    assert.deepEqual(SessionMessage.parse(bytes), message);
    assert.equal(SessionMessage.stream(SessionMessage.parse(bytes)), SessionMessage.stream(message));
    types.add(bytes[0]);
  }
  assert.deepEqual([...types].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
});

test('session messages: the layout is big-endian with the version after the type on open and resume', () => {
  assert.deepEqual(SessionMessage.encode({ type: 'credit', stream: 0x01020304, consumed: 0x0a0b0c0d0e0f1011n }),
    bytesOf([0x07, 1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11]));
  assert.deepEqual(SessionMessage.encode({ type: 'open', stream: 0x0a0b0c0d, name: 'ab', cols: 0x0102, rows: 0x0304, window: 0x10000 }),
    bytesOf([0x01, 0x01, 0x0a, 0x0b, 0x0c, 0x0d, 0x01, 0x02, 0x03, 0x04, 0x00, 0x01, 0x00, 0x00, 2, 0x61, 0x62]));
  const resume = SessionMessage.encode({ type: 'resume', stream: 9, token, received: 0x0102n, cols: 80, rows: 24, window: 4096 });
  assert.deepEqual(resume.subarray(0, 6), bytesOf([0x02, 0x01, 0, 0, 0, 9]));
  assert.deepEqual(resume.subarray(6, 22), token);
  assert.equal(resume.length, 38);
  assert.deepEqual(SessionMessage.encode({ type: 'exit', stream: 1, end: 2n, status: 3, signal: 'HUP' }),
    bytesOf([0x0a, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 3, 3, 0x48, 0x55, 0x50]));
  assert.deepEqual(SessionMessage.encode({ type: 'refused', stream: 1, reason: 'tooManySessions', text: 'no' }),
    bytesOf([0x0b, 0, 0, 0, 1, 5, 0, 2, 0x6e, 0x6f]));
  assert.deepEqual(SessionMessage.encode({ type: 'endOfInput', stream: 1 }), bytesOf([0x08, 0, 0, 0, 1]));
  assert.deepEqual(SessionMessage.encode({ type: 'close', stream: 1 }), bytesOf([0x09, 0, 0, 0, 1]));
  assert.equal(SessionMessageType.openAgent, 0x0c);
});

test('session messages: an unknown refusal reason reads as other', () => {
  for (const raw of [0, 3, 7, 42, 254]) {
    assert.deepEqual(SessionMessage.parse(bytesOf([0x0b, 0, 0, 0, 1, raw, 0, 1, 0x78])),
      { type: 'refused', stream: 1, reason: 'other', text: 'x' });
  }
});

test('session messages: a message longer than one frame is refused', () => {
  const longest = SessionMessage.encode({ type: 'output', stream: 1, offset: 0n, data: new Uint8Array(SessionLimits.maximumData).fill(1) });
  assert.equal(longest.length, SessionLimits.maximumLength);
  assert.equal(refusal(longest), null);
  refuses(concatBytes(longest, Uint8Array.of(1)), 'tooLong');
  const input = SessionMessage.encode({ type: 'input', stream: 1, data: new Uint8Array(SessionLimits.maximumLength - 4).fill(1) });
  assert.equal(input.length, SessionLimits.maximumLength + 1);
  refuses(input, 'tooLong');
  refuses(concatBytes(bytesOf([0x05, 0, 0, 0, 1]), new Uint8Array(70000)), 'tooLong');
  assert.equal(SessionLimits.maximumLength, 65518);
  assert.equal(SessionLimits.maximumData, 65505);
});

test('session messages: open agent carries a session and a pane within their rules', () => {
  /** @type {Message} */
  const message = { type: 'openAgent', stream: 9, session: 'work', pane: 'w1:p2', cols: 80, rows: 24, window: 65536 };
  assert.deepEqual(SessionMessage.encode(message),
    bytesOf([0x0c, 1, 0, 0, 0, 9, 0, 80, 0, 24, 0, 1, 0, 0, 4], utf8('work'), [5], utf8('w1:p2')));
  assert.deepEqual(SessionMessage.parse(SessionMessage.encode(message)), message);
  for (const [session, pane] of [['work', 'w1 p2'], ['no way', 'w1:p2'], ['', 'w1:p2'], ['work', ''], ['work', 'p'.repeat(33)]]) {
    const bytes = bytesOf([0x0c, 1, 0, 0, 0, 9, 0, 80, 0, 24, 0, 1, 0, 0, utf8(session).length], utf8(session),
      [utf8(pane).length], utf8(pane));
    refuses(bytes, 'agent', `${session} ${pane}`);
  }
  assert.equal(refusal(bytesOf([0x0c, 1, 0, 0, 0, 9, 0, 80, 0, 24, 0, 1, 0, 0, 1], utf8('w'), [32], utf8('p'.repeat(32)))), null);
});

test('session messages: an unknown type byte is refused, and so is an empty message', () => {
  const tail = [1, 0, 0, 0, 1, ...new Array(40).fill(0)];
  for (const byte of [0x00, 0x0d, 0x15, 0x16, 0x1f, 0x20, 0x7b, 0x80, 0xff]) {
    refuses(bytesOf([byte], tail), 'unknownType', `type ${byte}`);
    refuses(bytesOf([byte]), 'unknownType', `type ${byte} alone`);
  }
  refuses(new Uint8Array(0), 'cutShort');
});

test('session messages: open and resume need version 1', () => {
  const open = SessionMessage.encode({ type: 'open', stream: 1, name: 'w', cols: 80, rows: 24, window: 4096 });
  const resume = SessionMessage.encode({ type: 'resume', stream: 1, token, received: 0n, cols: 80, rows: 24, window: 4096 });
  const agent = SessionMessage.encode({ type: 'openAgent', stream: 1, session: 'w', pane: 'p', cols: 80, rows: 24, window: 4096 });
  for (const bytes of [open, resume, agent]) {
    assert.equal(refusal(bytes), null);
    for (const version of [0, 2, 0xff]) {
      const wrong = bytes.slice();
      wrong[1] = version;
      refuses(wrong, 'version', `version ${version}`);
    }
  }
});

test('session messages: cells are 1 to 1000', () => {
  /** @param {number} cols @param {number} rows @returns {Message[]} */
  const messages = (cols, rows) => [
    { type: 'open', stream: 1, name: null, cols, rows, window: 4096 },
    { type: 'resume', stream: 1, token, received: 0n, cols, rows, window: 4096 },
    { type: 'resize', stream: 1, cols, rows },
    { type: 'openAgent', stream: 1, session: 'default', pane: 'w1:p1', cols, rows, window: 4096 },
  ];
  for (const [cols, rows] of [[1, 1], [1000, 1000], [1, 1000], [1000, 1], [80, 24]]) {
    for (const message of messages(cols, rows)) assert.deepEqual(SessionMessage.parse(SessionMessage.encode(message)), message);
  }
  for (const [cols, rows] of [[0, 24], [80, 0], [1001, 24], [80, 1001], [0, 0], [65535, 65535]]) {
    for (const message of messages(cols, rows)) refuses(SessionMessage.encode(message), 'cells', `${cols}×${rows} ${message.type}`);
  }
});

test('session messages: the window is within 4 KiB to 64 MiB', () => {
  const low = SessionLimits.minimumWindow;
  const high = SessionLimits.maximumWindow;
  assert.equal(low, 4096);
  assert.equal(high, 64 * 1024 * 1024);
  /** @param {number} window @returns {Message[]} */
  const messages = (window) => [
    { type: 'open', stream: 1, name: null, cols: 80, rows: 24, window },
    { type: 'resume', stream: 1, token, received: 0n, cols: 80, rows: 24, window },
    { type: 'started', stream: 1, token, offset: 0n, window },
    { type: 'openAgent', stream: 1, session: 'default', pane: 'w1:p1', cols: 80, rows: 24, window },
  ];
  for (const window of [low, low + 1, high - 1, high]) {
    for (const message of messages(window)) assert.deepEqual(SessionMessage.parse(SessionMessage.encode(message)), message);
  }
  for (const window of [0, 1, low - 1, high + 1, U32_MAX]) {
    for (const message of messages(window)) refuses(SessionMessage.encode(message), 'window', `window ${window}`);
  }
});

test("session messages: open takes only herdr's session names; an empty one is the default session", () => {
  for (const name of ['a', 'A-b_c.9', 'x'.repeat(64), '..a', '.hidden']) {
    /** @type {Message} */
    const message = { type: 'open', stream: 1, name, cols: 80, rows: 24, window: 4096 };
    assert.deepEqual(SessionMessage.parse(SessionMessage.encode(message)), message, name);
  }
  for (const name of ['.', '..', 'a b', 'a/b', 'a:b', 'é', 'tab\t', 'x'.repeat(65)]) {
    refuses(SessionMessage.encode({ type: 'open', stream: 1, name, cols: 80, rows: 24, window: 4096 }), 'name', JSON.stringify(name));
  }
  assert.deepEqual(SessionMessage.parse(SessionMessage.encode({ type: 'open', stream: 1, name: '', cols: 80, rows: 24, window: 4096 })),
    { type: 'open', stream: 1, name: null, cols: 80, rows: 24, window: 4096 });
});

test('session messages: every prefix is refused, or is the same output or input cut short', () => {
  let checked = 0;
  for (const message of samples) {
    const bytes = SessionMessage.encode(message);
    const header = message.type === 'output' ? 13 : message.type === 'input' ? 5 : null;
    const lengths = bytes.length > 300 ? [...Array(300).keys(), bytes.length - 1] : [...Array(bytes.length).keys()];
    for (const length of lengths) {
      const prefix = bytes.subarray(0, length);
      if (header !== null && length >= header) {
        const parsed = SessionMessage.parse(prefix);
        assert.ok((parsed.type === 'output' || parsed.type === 'input') && parsed.type === message.type);
        const data = message.type === 'output' || message.type === 'input' ? message.data : new Uint8Array(0);
        assert.deepEqual(parsed.data, data.subarray(0, length - header));
      } else {
        refuses(prefix, 'cutShort', `${message.type} cut to ${length} of ${bytes.length} bytes`);
        checked += 1;
      }
    }
  }
  assert.ok(checked > 500, `${checked}`);
});

test('session messages: trailing bytes are refused', () => {
  for (const message of samples) {
    if (message.type === 'output' || message.type === 'input') continue;
    const bytes = SessionMessage.encode(message);
    refuses(concatBytes(bytes, Uint8Array.of(0)), 'trailingBytes', message.type);
    refuses(concatBytes(bytes, new Uint8Array(7).fill(0x41)), 'trailingBytes', message.type);
  }
});

test('session messages: text that is not UTF-8 is refused', () => {
  const badSequences = [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf]];
  for (const bad of badSequences) {
    const open = SessionMessage.encode({ type: 'open', stream: 1, name: null, cols: 80, rows: 24, window: 4096 });
    open[open.length - 1] = bad.length;
    refuses(bytesOf(open, bad), 'notUTF8');
    const exit = SessionMessage.encode({ type: 'exit', stream: 1, end: 0n, status: null, signal: null });
    exit[exit.length - 1] = bad.length;
    refuses(bytesOf(exit, bad), 'notUTF8');
    assert.equal(refusal(bytesOf(exit.subarray(0, exit.length - 1), [1, 0x41])), null, 'the same message with a good name parses');
    refuses(bytesOf([0x0b, 0, 0, 0, 1, 1, 0, bad.length], bad), 'notUTF8');
    assert.equal(refusal(bytesOf([0x0b, 0, 0, 0, 1, 1, 0, 1, 0x41])), null);
  }
  // A byte order mark is a character like any: kept, not stripped.
  const refused = SessionMessage.parse(bytesOf([0x0b, 0, 0, 0, 1, 1, 0, 4, 0xef, 0xbb, 0xbf, 0x41]));
  assert.ok(refused.type === 'refused' && refused.text === '\ufeffA');
});

test("session messages: exit's status flag is 0 or 1; with 0 the status is ignored", () => {
  const bytes = SessionMessage.encode({ type: 'exit', stream: 1, end: 7n, status: 9, signal: null });
  assert.equal(bytes[13], 1);
  const none = bytes.slice();
  none[13] = 0;
  assert.deepEqual(SessionMessage.parse(none), { type: 'exit', stream: 1, end: 7n, status: null, signal: null });
  for (const flag of [2, 3, 0x80, 0xff]) {
    const wrong = bytes.slice();
    wrong[13] = flag;
    refuses(wrong, 'exitStatusFlag', `flag ${flag}`);
  }
});

test('session messages: signal names are at most 32 bytes; the writer cuts a longer one', () => {
  /** @type {Message} */
  const longest = { type: 'exit', stream: 1, end: 0n, status: null, signal: 'S'.repeat(32) };
  assert.equal(refusal(SessionMessage.encode(longest)), null);
  const tooLong = SessionMessage.encode(longest);
  tooLong[18] = 33;
  refuses(bytesOf(tooLong, [0x53]), 'signalName');
  assert.deepEqual(SessionMessage.parse(SessionMessage.encode({ type: 'exit', stream: 1, end: 0n, status: null, signal: 'S'.repeat(40) })), longest);
});

test('session messages: a refusal text is at most 1024 bytes; the writer cuts a longer one', () => {
  /** @type {Message} */
  const longest = { type: 'refused', stream: 1, reason: 'other', text: 't'.repeat(1024) };
  assert.equal(refusal(SessionMessage.encode(longest)), null);
  refuses(bytesOf([0x0b, 0, 0, 0, 1, 255, 0x04, 0x01], new Uint8Array(1025).fill(0x74)), 'refusalText');
  refuses(bytesOf([0x0b, 0, 0, 0, 1, 255, 0xff, 0xff], new Uint8Array(65535).fill(0x74)), 'tooLong');
  refuses(bytesOf([0x0b, 0, 0, 0, 1, 255, 0xff, 0xff], new Uint8Array(1000).fill(0x74)), 'refusalText');
  assert.deepEqual(SessionMessage.parse(SessionMessage.encode({ type: 'refused', stream: 1, reason: 'other', text: 't'.repeat(5000) })), longest);
});

test("session messages: texts are cut at a code point's boundary", () => {
  const refused = SessionMessage.parse(SessionMessage.encode({ type: 'refused', stream: 1, reason: 'startFailed', text: 'a'.repeat(1023) + 'é' }));
  assert.ok(refused.type === 'refused' && refused.text === 'a'.repeat(1023));
  const exit = SessionMessage.parse(SessionMessage.encode({ type: 'exit', stream: 1, end: 0n, status: null, signal: 'S'.repeat(31) + 'é' }));
  assert.ok(exit.type === 'exit' && exit.signal === 'S'.repeat(31));
  const emoji = SessionMessage.parse(SessionMessage.encode({ type: 'refused', stream: 1, reason: 'other', text: 'a'.repeat(1021) + '🙂' }));
  assert.ok(emoji.type === 'refused' && emoji.text === 'a'.repeat(1021), 'a 4-byte code point is not split');
});

test('session messages: the encoder refuses values its fields cannot hold, saying unencodable', () => {
  /** @type {unknown[]} */
  const wrong = [
    { type: 'close', stream: -1 },
    { type: 'close', stream: 2 ** 32 },
    { type: 'close', stream: 1.5 },
    { type: 'credit', stream: 1, consumed: -1n },
    { type: 'credit', stream: 1, consumed: 1n << 64n },
    { type: 'credit', stream: 1, consumed: 5 },
    { type: 'started', stream: 1, token: new Uint8Array(15), offset: 0n, window: 4096 },
    { type: 'resize', stream: 1, cols: 65536, rows: 1 },
    { type: 'open', stream: 1, name: 'x'.repeat(256), cols: 1, rows: 1, window: 4096 },
    { type: 'exit', stream: 1, end: 0n, status: 2 ** 31, signal: null },
  ];
  for (const message of wrong) {
    assert.throws(() => SessionMessage.encode(/** @type {Message} */ (message)),
      (error) => error instanceof SessionMessageError && error.kind === 'unencodable', JSON.stringify(message, (_, v) => typeof v === 'bigint' ? `${v}` : v));
  }
});
