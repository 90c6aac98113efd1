// The screen session's messages (docs/companion.md, "Screen sessions"): every one's bytes round
// trip, every bound of the parser refuses with its kind, one encoding for each content, as
// Tests/CompanionTests/ScreenMessageTests.swift checks the Swift side.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionMessage } from '../js/session-message.js';
import { SessionMessageError, SessionLimits } from '../js/session-wire.js';
import { ScreenUpdate } from '../js/screen-update.js';
import { ScreenTarget } from '../js/screen-target.js';
import { ScreenCell } from '../js/screen-cell.js';
import { CellStyle } from '../js/cell-style.js';
import { TerminalColor } from '../js/terminal-color.js';
import { ScreenModes } from '../js/screen-modes.js';
import { ChannelMessage } from '../js/channel-message.js';
import { CompanionMessage } from '../js/companion-message.js';
import { concatBytes, toHex, utf8 } from '../js/bytes.js';

/** @typedef {import('../js/session-message.js').SessionMessage} Message */
/** @typedef {import('../js/session-wire.js').SessionMessageErrorKind} Kind */
/** @typedef {import('../js/screen-update.js').ScreenUpdateRow} Row */

const token = Uint8Array.from({ length: 16 }, (_, i) => (i * 13 + 1) & 0xff);
const red = CellStyle.make({ foreground: TerminalColor.indexed(1), flags: CellStyle.flags.bold });
const everything = CellStyle.make({
  foreground: TerminalColor.rgb(1, 2, 3), background: TerminalColor.indexed(255), flags: CellStyle.allFlags, underline: 'curly',
});
const U64_MAX = 0xffffffffffffffffn;

/**
 * A screen update of stream 3 with modes and bells set, as the Swift test's `update`.
 * @param {{state?: bigint, base?: bigint, columns?: number, rows?: number, scroll?: number, title?: string | null,
 *   lines?: Row[], cursor?: [number, number], isLastPart?: boolean}} [fields]
 * @returns {Message}
 */
function update(fields = {}) {
  return {
    type: 'screen',
    update: {
      stream: 3, state: fields.state ?? 2n, base: fields.base ?? 1n, inputBytes: 17n, isLastPart: fields.isLastPart ?? true,
      columns: fields.columns ?? 80, rows: fields.rows ?? 24,
      cursor: { row: (fields.cursor ?? [0, 0])[0], column: (fields.cursor ?? [0, 0])[1], visible: true },
      modes: ScreenModes.make({ applicationCursorKeys: true, mouse: 'drag' }), bells: 2, scroll: fields.scroll ?? 0,
      title: fields.title ?? null, lines: fields.lines ?? [],
    },
  };
}

/** @type {Message[]} */
const samples = [
  { type: 'openScreen', stream: 1, target: ScreenTarget.session(null), cols: 80, rows: 24 },
  { type: 'openScreen', stream: 2, target: ScreenTarget.session('work'), cols: 1000, rows: 1 },
  { type: 'openScreen', stream: 0xffffffff, target: ScreenTarget.agent('default', 'w1:p2.3'), cols: 1, rows: 1000 },
  { type: 'resumeScreen', stream: 4, token, cols: 120, rows: 40 },
  { type: 'screenStarted', stream: 5, token, inputReceived: U64_MAX },
  update(),
  update({ state: 1n, base: 0n, title: '', lines: [] }),
  update({
    state: U64_MAX, base: U64_MAX - 1n, columns: 1000, rows: 1000, scroll: 999, title: 'ü'.repeat(512),
    lines: [
      ScreenUpdate.row(0, [ScreenCell.make('a', 1, red), ScreenCell.make('b')]),
      ScreenUpdate.row(999, [
        ScreenCell.make('世', 2, everything), ScreenCell.make('', 0, everything), ScreenCell.make('e\u0301\u0302'),
        ScreenCell.blank, ScreenCell.make(' '),
      ]),
    ],
    cursor: [999, 999], isLastPart: false,
  }),
  update({ lines: [ScreenUpdate.row(5, [ScreenCell.make('x')], 3, true), ScreenUpdate.row(5, [ScreenCell.make('y')], 9, true)] }),
  { type: 'screenAck', stream: 6, state: 1n },
  { type: 'screenAck', stream: 6, state: U64_MAX },
  { type: 'scrollbackRequest', stream: 7, end: 1n << 40n, count: 1 },
  { type: 'scrollbackRequest', stream: 7, end: 0n, count: 1000 },
  {
    type: 'scrollback',
    scrollback: {
      stream: 8, first: 10n, oldest: 2n, total: 13n,
      lines: [[ScreenCell.make('x')], [], [ScreenCell.make('🙂', 2), ScreenCell.make('', 0)]],
    },
  },
  { type: 'scrollback', scrollback: { stream: 8, first: 0n, oldest: 0n, total: 0n, lines: [] } },
];

/**
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

/** The offset of a screen message's fields, after the type and the stream. */
const At = Object.freeze({
  state: 5, base: 13, flags: 29, columns: 30, rows: 32, cursorRow: 34, cursorColumn: 36, modes: 38, mouse: 39, scroll: 44,
  titleLength: 46,
});

/**
 * @param {Message} message
 * @param {[number, number[]][]} edits
 */
function patched(message, edits) {
  const bytes = SessionMessage.encode(message);
  for (const [offset, value] of edits) bytes.set(value, offset);
  return bytes;
}

test('screen messages: every one round trips through the channel, numbered 0x0E to 0x14', () => {
  const types = new Set();
  for (const message of samples) {
    const bytes = SessionMessage.encode(message);
    assert.ok(bytes.length <= SessionLimits.maximumLength);
    assert.deepEqual(ChannelMessage.parse(bytes), { type: 'session', message });
    assert.equal(SessionMessage.stream(SessionMessage.parse(bytes)), SessionMessage.stream(message));
    types.add(bytes[0]);
  }
  assert.deepEqual([...types].sort((a, b) => a - b), [0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14]);
});

test('screen messages: every prefix is refused, and so are trailing bytes', () => {
  let checked = 0;
  for (const message of samples) {
    const bytes = SessionMessage.encode(message);
    const lengths = bytes.length > 400 ? [...Array(400).keys(), bytes.length - 1] : [...Array(bytes.length).keys()];
    for (const length of lengths) {
      refuses(bytes.subarray(0, length), 'cutShort', `${message.type} cut to ${length} bytes`);
      checked += 1;
    }
    refuses(concatBytes(bytes, Uint8Array.of(0)), 'trailingBytes', `${message.type} with a byte more`);
  }
  assert.ok(checked > 700, `${checked}`);
});

test("screen messages: a screen's header is bounded", () => {
  const plain = update();
  assert.equal(refusal(SessionMessage.encode(plain)), null);
  /** @type {[string, Kind, [number, number[]][]][]} */
  const refused = [
    ['state 0', 'screenState', [[At.state, [0, 0, 0, 0, 0, 0, 0, 0]], [At.base, [0, 0, 0, 0, 0, 0, 0, 0]]]],
    ['a base not before the state', 'screenState', [[At.base, [0, 0, 0, 0, 0, 0, 0, 2]]]],
    ['an unknown flag', 'screenFlags', [[At.flags, [0x05]]]],
    ['0 columns', 'screenSize', [[At.columns, [0, 0]]]],
    ['1001 rows', 'screenSize', [[At.rows, [0x03, 0xe9]]]],
    ['the cursor below the screen', 'cursor', [[At.cursorRow, [0, 24]]]],
    ['the cursor right of the screen', 'cursor', [[At.cursorColumn, [0, 80]]]],
    ['an unknown mode', 'screenModes', [[At.modes, [0x20]]]],
    ['mouse mode 4', 'mouse', [[At.mouse, [4]]]],
    ['a scroll of every row', 'scroll', [[At.scroll, [0, 24]]]],
    ['title bytes without the flag', 'titleFlag', [[At.titleLength, [0, 1]]]],
    ['a title of 1025 bytes', 'title', [[At.titleLength, [0x04, 0x01]]]],
  ];
  for (const [what, kind, edits] of refused) refuses(patched(plain, edits), kind, what);
  refuses(patched(update({ state: 1n, base: 0n }), [[At.scroll, [0, 1]]]), 'scroll', 'a whole state does not scroll');
  assert.equal(refusal(patched(plain, [[At.scroll, [0, 23]]])), null);
  // The longest title, with the flag; every mode and mouse mode.
  const titled = SessionMessage.parse(SessionMessage.encode(update({ title: 'é'.repeat(600) })));
  assert.ok(titled.type === 'screen' && titled.update.title === 'é'.repeat(512), 'a title cut to 1024 bytes');
  for (const mouse of ScreenModes.mouseModes) {
    const message = update();
    if (message.type !== 'screen') throw new Error('not a screen');
    message.update.modes = { applicationCursorKeys: true, bracketedPaste: true, mouse, alternateScreen: true, reverseVideo: true };
    message.update.cursor.visible = false;
    assert.deepEqual(SessionMessage.parse(SessionMessage.encode(message)), message);
  }
});

test("screen messages: rows and cells are bounded", () => {
  const one = ScreenUpdate.row(3, [ScreenCell.make('a', 1, red)]);
  const bytes = SessionMessage.encode(update({ lines: [one] }));
  // After the header: row count, row index, column, run count, style (fg 1 1, bg 0, flags,
  // underline), cell count (the top bit: a text run), the text's length, the text.
  const rows = 50 - 2;
  assert.equal(ScreenUpdate.headerLength, 50);
  assert.equal(toHex(bytes.subarray(rows)), toHex(Uint8Array.of(0, 1, 0, 3, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0x80, 1, 0, 1, 0x61)));
  // A run with a wide character is each cell: a byte of width and length, then the text.
  const wide = ScreenUpdate.row(3, [ScreenCell.make('界', 2, red), ScreenCell.make('', 0, red)]);
  const wideBytes = SessionMessage.encode(update({ lines: [wide] }));
  assert.equal(toHex(wideBytes.subarray(rows + 13)), toHex(Uint8Array.of(0, 2, 0x83, 0xe7, 0x95, 0x8c, 0x00)));
  refuses(patched(update({ lines: [wide] }), [[rows + 15, [0xc3]]]), 'cell', 'a cell of width 3');
  /** @type {[string, Kind, [number, number[]][]][]} */
  const refused = [
    ['row 24 of 24', 'row', [[rows + 2, [0, 24]]]],
    ['more row entries than the message holds', 'cutShort', [[rows, [0, 25]]]],
    ['more row entries than any message holds', 'rowCount', [[rows, [0xff, 0xff]]]],
    ['column 80 of 80', 'row', [[rows + 4, [0, 80]]]],
    ['column 80 of 80, keeping the rest', 'row', [[rows + 4, [0x80, 80]]]],
    ['a colour of kind 3', 'colour', [[rows + 8, [3]]]],
    ['an unknown attribute', 'attributes', [[rows + 11, [0x20]]]],
    ['underline 4', 'underline', [[rows + 12, [4]]]],
    ['an empty run', 'runLength', [[rows + 13, [0, 0]]]],
    ['an empty text run', 'runLength', [[rows + 13, [0x80, 0]]]],
    ['more than four bytes of text a cell', 'textRun', [[rows + 15, [0, 5]]]],
    ['two cells of one character', 'textRun', [[rows + 13, [0x80, 2]]]],
    ['a text run that is not UTF-8', 'notUTF8', [[rows + 17, [0xff]]]],
  ];
  for (const [what, kind, edits] of refused) refuses(patched(update({ lines: [one] }), edits), kind, what);
  // 65518 / 6 entries at most: 10919 parse as far as the count goes.
  const most = Math.floor(SessionLimits.maximumLength / 6);
  refuses(patched(update({ lines: [one] }), [[rows, [most >> 8, most & 0xff]]]), 'cutShort');
  refuses(patched(update({ lines: [one] }), [[rows, [(most + 1) >> 8, (most + 1) & 0xff]]]), 'rowCount');

  refuses(SessionMessage.encode(update({ lines: [ScreenUpdate.row(5, []), ScreenUpdate.row(5, [])] })), 'rowOrder', 'a row twice');
  refuses(SessionMessage.encode(update({ lines: [ScreenUpdate.row(6, []), ScreenUpdate.row(5, [])] })), 'rowOrder', 'rows out of order');
  // Parts of one row: each after the one before, which kept the rest of the row.
  const cell = [ScreenCell.make('c')];
  /** @param {Row[]} lines */
  const parts = (lines) => SessionMessage.encode(update({ lines }));
  assert.equal(refusal(parts([ScreenUpdate.row(5, cell, 2, true), ScreenUpdate.row(5, cell, 3)])), null);
  refuses(parts([ScreenUpdate.row(5, [...cell, ...cell], 2, true), ScreenUpdate.row(5, cell, 3)]), 'rowOrder', 'overlapping parts');
  refuses(parts([ScreenUpdate.row(5, cell, 2), ScreenUpdate.row(5, cell, 9)]), 'rowOrder', 'a part after one that cleared the rest');
  refuses(parts([ScreenUpdate.row(0, [...cell, ...cell], 79)]), 'runLength', 'cells past the last column');
  assert.equal(refusal(parts([ScreenUpdate.row(0, cell, 79)])), null, 'the last column');
  refuses(SessionMessage.encode(update({ columns: 2, lines: [ScreenUpdate.row(0, new Array(3).fill(ScreenCell.make('x')))] })),
    'runLength', 'more cells than columns');
  // A cell's text: 32 bytes at most (the encoder cuts; a peer that says more is refused).
  const long = ScreenCell.make('e\u0301'.repeat(11));
  const encoded = SessionMessage.encode(update({ lines: [ScreenUpdate.row(0, [long])] }));
  // (After a default style's four bytes: e and U+0301 are 3 bytes, the eleventh e the 31st.)
  assert.equal(encoded[rows + 14], 0x40 | 31, "the text cut to at most 32 bytes at a code point's boundary");
  const tooLong = concatBytes(encoded.subarray(0, rows + 14), Uint8Array.of(0x40 | 33), new Uint8Array(33).fill(0x61));
  refuses(tooLong, 'cell');
  tooLong[rows + 14] = 0x40 | 32;
  refuses(tooLong, 'trailingBytes', 'a byte more than its length says');
  // Two runs of one style are one run: the encoding is one for each row.
  const twoRuns = concatBytes(encoded.subarray(0, rows + 6),
    Uint8Array.of(0, 2, 0, 0, 0, 0, 0x80, 1, 0, 1, 0x61, 0, 0, 0, 0, 0x80, 1, 0, 1, 0x62));
  refuses(twoRuns, 'runStyle');
  assert.equal(refusal(concatBytes(twoRuns.subarray(0, rows + 6), Uint8Array.of(0, 1), twoRuns.subarray(rows + 8, rows + 17))), null);
  // A run of characters is sent as its text: each cell alone is refused.
  refuses(concatBytes(encoded.subarray(0, rows + 6), Uint8Array.of(0, 1, 0, 0, 0, 0, 0, 1, 0x41, 0x61)), 'runEncoding');
  refuses(concatBytes(encoded.subarray(0, rows + 6), Uint8Array.of(0, 1, 0, 0, 0, 0, 0, 1, 0x40)), 'runEncoding', 'an empty cell alone');
  // An empty cell in a text run is a NUL; a code point of four bytes is one cell.
  const withEmpty = ScreenUpdate.row(0, [ScreenCell.make('x'), ScreenCell.blank, ScreenCell.make('é')]);
  const emptyBytes = SessionMessage.encode(update({ lines: [withEmpty] }));
  assert.equal(toHex(emptyBytes.subarray(rows + 12)), toHex(Uint8Array.of(0x80, 3, 0, 4, 0x78, 0x00, 0xc3, 0xa9)));
  const decoded = SessionMessage.parse(emptyBytes);
  assert.ok(decoded.type === 'screen');
  assert.deepEqual(decoded.update.lines, [withEmpty]);
  const astral = ScreenUpdate.row(0, [ScreenCell.make('𝔸'), ScreenCell.make('\u0301')]);
  const astralBytes = SessionMessage.encode(update({ lines: [astral] }));
  assert.equal(toHex(astralBytes.subarray(rows + 12)), toHex(Uint8Array.of(0x80, 2, 0, 6, 0xf0, 0x9d, 0x94, 0xb8, 0xcc, 0x81)));
  const astralDecoded = SessionMessage.parse(astralBytes);
  assert.ok(astralDecoded.type === 'screen');
  assert.deepEqual(astralDecoded.update.lines, [astral], 'a lone combining mark is a character too');
  // A cell of two code points, of width 2, or a NUL of its own, is not a character: a run of cells.
  for (const cell of [ScreenCell.make('e\u0301'), ScreenCell.make('界', 2), ScreenCell.make('\u0000')]) {
    const one = SessionMessage.encode(update({ lines: [ScreenUpdate.row(0, [cell])] }));
    assert.equal(one[rows + 12] & 0x80, 0);
  }
  // ...and the writer makes one run of neighbours of one style, wherever their objects come from.
  const same = [ScreenCell.make('a', 1, CellStyle.make({ flags: 1 })), ScreenCell.make('b', 1, CellStyle.make({ flags: 1 }))];
  const oneRun = SessionMessage.encode(update({ lines: [ScreenUpdate.row(0, same)] }));
  assert.deepEqual(Array.from(oneRun.subarray(rows + 6, rows + 8)), [0, 1]);
});

test('screen messages: open screen takes the rules of open and open agent', () => {
  const session = SessionMessage.encode({ type: 'openScreen', stream: 1, target: ScreenTarget.session('ok'), cols: 80, rows: 24 });
  assert.deepEqual(Array.from(session.subarray(0, 2)), [0x0e, 1], 'the type, then the version');
  refuses(concatBytes(Uint8Array.of(0x0e, 2), session.subarray(2)), 'version', 'version 2');
  const kind2 = session.slice();
  kind2[10] = 2;
  refuses(kind2, 'screenTarget', 'a target of kind 2');
  for (const name of ['a b', 'n'.repeat(65), '.', '..']) {
    refuses(SessionMessage.encode({ type: 'openScreen', stream: 1, target: ScreenTarget.session(name), cols: 80, rows: 24 }), 'name', name);
  }
  for (const [name, pane] of [['default', 'a/b'], ['default', ''], ['', 'w1:p1'], ['a b', 'w1:p1']]) {
    refuses(SessionMessage.encode({ type: 'openScreen', stream: 1, target: ScreenTarget.agent(name, pane), cols: 80, rows: 24 }),
      'agent', `${name} ${pane}`);
  }
  refuses(SessionMessage.encode({ type: 'openScreen', stream: 1, target: ScreenTarget.session(null), cols: 0, rows: 24 }), 'cells');
  refuses(SessionMessage.encode({ type: 'resumeScreen', stream: 1, token, cols: 80, rows: 1001 }), 'cells');
  const resume = SessionMessage.encode({ type: 'resumeScreen', stream: 1, token, cols: 80, rows: 24 });
  resume[1] = 0;
  refuses(resume, 'version');
  // The encoder cuts a target's names to 255 bytes (which herdr's rule then refuses).
  const cut = SessionMessage.encode({ type: 'openScreen', stream: 1, target: ScreenTarget.session('n'.repeat(300)), cols: 80, rows: 24 });
  assert.equal(cut[11], 255);
  assert.equal(cut.length, 12 + 255);
});

test('screen messages: acknowledgements and scrollback are bounded', () => {
  refuses(SessionMessage.encode({ type: 'screenAck', stream: 1, state: 0n }), 'screenAck');
  refuses(SessionMessage.encode({ type: 'scrollbackRequest', stream: 1, end: 5n, count: 0 }), 'scrollbackRequest');
  refuses(SessionMessage.encode({ type: 'scrollbackRequest', stream: 1, end: 5n, count: 1001 }), 'scrollbackRequest');
  /** @type {[bigint, bigint, bigint, number][]} first, oldest, total, lines */
  const beyond = [[1n, 2n, 5n, 0], [4n, 2n, 5n, 2], [0n, 6n, 5n, 0], [6n, 0n, 5n, 0], [U64_MAX, 0n, U64_MAX, 1]];
  for (const [first, oldest, total, count] of beyond) {
    const lines = new Array(count).fill([]);
    refuses(SessionMessage.encode({ type: 'scrollback', scrollback: { stream: 1, first, oldest, total, lines } }), 'scrollbackLines',
      `${first} ${oldest} ${total} ${count}`);
  }
  // The edges that are kept: the newest line, and none at the end.
  for (const [first, oldest, total, count] of /** @type {[bigint, bigint, bigint, number][]} */ ([[4n, 2n, 5n, 1], [5n, 5n, 5n, 0], [2n, 2n, 1002n, 1000]])) {
    const lines = new Array(count).fill([]);
    assert.equal(refusal(SessionMessage.encode({ type: 'scrollback', scrollback: { stream: 1, first, oldest, total, lines } })), null);
  }
  refuses(SessionMessage.encode({ type: 'scrollback', scrollback: { stream: 1, first: 0n, oldest: 0n, total: 2000n, lines: new Array(1001).fill([]) } }),
    'scrollbackLines', 'more than 1000 lines');
  // A line holds at most 1000 cells.
  const thousand = new Array(1000).fill(ScreenCell.make('x'));
  assert.equal(refusal(SessionMessage.encode({ type: 'scrollback', scrollback: { stream: 1, first: 0n, oldest: 0n, total: 1n, lines: [thousand] } })), null);
  refuses(SessionMessage.encode({ type: 'scrollback', scrollback: { stream: 1, first: 0n, oldest: 0n, total: 1n, lines: [[...thousand, ScreenCell.make('y')]] } }),
    'runLength');
  // Each line is its runs alone: no index, no column.
  const one = SessionMessage.encode({ type: 'scrollback', scrollback: { stream: 1, first: 0n, oldest: 0n, total: 1n, lines: [[ScreenCell.make('x')]] } });
  assert.equal(toHex(one.subarray(31)), toHex(Uint8Array.of(0, 1, 0, 0, 0, 0, 0x80, 1, 0, 1, 0x78)));
});

test('screen messages: the computer says it serves screen sessions', () => {
  /** @type {import('../js/companion-message.js').CompanionMessage} */
  const served = { type: 'serves', served: new Map([[CompanionMessage.screenSessions, CompanionMessage.screenSessionsVersion]]) };
  assert.equal(new TextDecoder().decode(CompanionMessage.encode(served)), '{"serves":{"screen":1}}');
  assert.deepEqual(CompanionMessage.parse(CompanionMessage.encode(served)), served);
  const later = '{"serves":{"screen":2,"push":1,"bad name":1,"x":"text","y":-1,"z":1.5}}';
  assert.deepEqual(CompanionMessage.parse(utf8(later)), { type: 'serves', served: new Map([['screen', 2], ['push', 1]]) });
  const many = '{"serves":{' + Array.from({ length: 17 }, (_, i) => `"k${i}":1`).join(',') + '}}';
  assert.throws(() => CompanionMessage.parse(utf8(many)), { kind: 'serves' });
  assert.throws(() => CompanionMessage.parse(utf8('{"serves":1}')), { kind: 'serves' });
});
