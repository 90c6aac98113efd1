// One `screen` message (0x11, docs/companion.md, "Screen sessions"): a part of numbered screen
// state `state`, as the change from state `base` (0: from a blank screen, the whole screen). A
// state too large for one message spans several, in order, each carrying the same header; the
// last has `isLastPart`. The device applies a part's rows as they come (screen-replica.js) and
// acknowledges the state after its last part. The twin of ScreenUpdate.

import { SessionLimits, SessionMessageError, utf8Prefix } from './session-wire.js';
import { ScreenCellCoding } from './screen-cell-coding.js';
import { ScreenModes } from './screen-modes.js';

/** @typedef {import('./session-wire.js').Writer} Writer */
/** @typedef {import('./session-wire.js').Reader} Reader */
/** @typedef {import('./screen-cell.js').ScreenCell} ScreenCell */
/** @typedef {import('./terminal-screen.js').Cursor} Cursor */

/**
 * Cells of a row from column `column`. The cells after them, to the screen's width, are blank
 * in the plain style, or, when `keepsRest`, stay as they were (a change within a row, as mosh's
 * client redraws only the cells that changed). It ends at `column + cells.length`.
 * @typedef {object} ScreenUpdateRow
 * @property {number} index
 * @property {number} column
 * @property {ScreenCell[]} cells
 * @property {boolean} keepsRest
 */

/**
 * @typedef {object} ScreenUpdate
 * @property {number} stream
 * @property {bigint} state from 1, one more for every state the session sends
 * @property {bigint} base the state this one changes: the last the computer sent on this connection, or 0
 * @property {bigint} inputBytes the input bytes the program had been given (at least 50 ms)
 *   before the screen was taken: a device's predicted echo of bytes up to here is confirmed or
 *   refuted by this screen
 * @property {boolean} isLastPart
 * @property {number} columns
 * @property {number} rows
 * @property {Cursor} cursor
 * @property {ScreenModes} modes
 * @property {number} bells bells rung since the session started (u32, wrapping)
 * @property {number} scroll rows the whole screen moved up before `lines` apply (0 in a whole
 *   state); the rows that come in at the bottom are blank until `lines` says otherwise
 * @property {string | null} title the window title, when it changed (always in a whole state's
 *   first part); null: unchanged
 * @property {ScreenUpdateRow[]} lines the row entries, in order of row
 */

/** The top bit of a row entry's column word: the cells after the entry's stay as they were. */
const KEEPS_REST_BIT = 0x8000;

/**
 * The bytes of a message before its rows: type, stream, state, base, input, flags, size,
 * cursor, modes, mouse, bells, scroll, the title's length and the row count.
 */
const HEADER_LENGTH = 1 + 4 + 8 + 8 + 8 + 1 + 4 + 4 + 1 + 1 + 4 + 2 + 2 + 2;

/** A row entry is at least its index, its column and its run count. */
const MINIMUM_ROW_ENTRY = 6;

const Flag = Object.freeze({ lastPart: 1, title: 2 });

const ModeBit = Object.freeze({
  cursorVisible: 1,
  applicationCursorKeys: 2,
  bracketedPaste: 4,
  alternateScreen: 8,
  reverseVideo: 16,
  all: 0x1f,
});

/**
 * A row entry.
 * @param {number} index
 * @param {ScreenCell[]} cells
 * @param {number} [column]
 * @param {boolean} [keepsRest]
 * @returns {ScreenUpdateRow}
 */
function row(index, cells, column = 0, keepsRest = false) {
  return { index, column, cells, keepsRest };
}

/** @param {ScreenUpdateRow} entry @returns {number} the column after its last cell */
function rowEnd(entry) {
  return entry.column + entry.cells.length;
}

/**
 * The fields after the type and the stream.
 * @param {ScreenUpdate} update
 * @param {Writer} out
 */
function write(update, out) {
  out.u64(update.state);
  out.u64(update.base);
  out.u64(update.inputBytes);
  out.u8((update.isLastPart ? Flag.lastPart : 0) | (update.title !== null ? Flag.title : 0));
  out.u16(update.columns);
  out.u16(update.rows);
  out.u16(update.cursor.row);
  out.u16(update.cursor.column);
  let modeBits = update.cursor.visible ? ModeBit.cursorVisible : 0;
  if (update.modes.applicationCursorKeys) modeBits |= ModeBit.applicationCursorKeys;
  if (update.modes.bracketedPaste) modeBits |= ModeBit.bracketedPaste;
  if (update.modes.alternateScreen) modeBits |= ModeBit.alternateScreen;
  if (update.modes.reverseVideo) modeBits |= ModeBit.reverseVideo;
  out.u8(modeBits);
  out.u8(ScreenModes.mouseModes.indexOf(update.modes.mouse));
  out.u32(update.bells);
  out.u16(update.scroll);
  const title = utf8Prefix(update.title ?? '', SessionLimits.maximumText);
  out.u16(title.length);
  out.bytes(title);
  out.u16(update.lines.length);
  for (const line of update.lines) {
    out.u16(line.index);
    if (!Number.isInteger(line.column) || line.column < 0 || line.column >= KEEPS_REST_BIT) {
      throw new SessionMessageError('unencodable', `a row entry from column ${line.column}`);
    }
    out.u16(line.column | (line.keepsRest ? KEEPS_REST_BIT : 0));
    ScreenCellCoding.write(line.cells, out);
  }
}

/**
 * Reads the fields after the type and the stream; throws a `SessionMessageError` for anything
 * the protocol does not allow.
 * @param {number} stream
 * @param {Reader} reader
 * @returns {ScreenUpdate}
 */
function read(stream, reader) {
  const state = reader.u64();
  const base = reader.u64();
  if (state === 0n || base >= state) {
    throw new SessionMessageError('screenState', `screen state ${state} changing state ${base} (states count from 1, up)`);
  }
  const inputBytes = reader.u64();
  const flags = reader.u8();
  if ((flags & ~(Flag.lastPart | Flag.title)) !== 0) {
    throw new SessionMessageError('screenFlags', `screen flags ${flags} with unknown bits`);
  }
  const columns = reader.u16();
  const rows = reader.u16();
  if (columns < 1 || columns > SessionLimits.maximumCells || rows < 1 || rows > SessionLimits.maximumCells) {
    throw new SessionMessageError('screenSize',
      `a screen of ${columns}×${rows} cells (1 to ${SessionLimits.maximumCells} each)`);
  }
  const cursorRow = reader.u16();
  const cursorColumn = reader.u16();
  if (cursorRow >= rows || cursorColumn >= columns) {
    throw new SessionMessageError('cursor',
      `a cursor at row ${cursorRow}, column ${cursorColumn} of a ${columns}×${rows} screen`);
  }
  const modeBits = reader.u8();
  if ((modeBits & ~ModeBit.all) !== 0) {
    throw new SessionMessageError('screenModes', `screen modes ${modeBits} with unknown bits`);
  }
  const mouse = reader.u8();
  if (mouse >= ScreenModes.mouseModes.length) {
    throw new SessionMessageError('mouse', `a mouse mode of ${mouse} (0 to 3)`);
  }
  const modes = ScreenModes.make({
    applicationCursorKeys: (modeBits & ModeBit.applicationCursorKeys) !== 0,
    bracketedPaste: (modeBits & ModeBit.bracketedPaste) !== 0,
    mouse: ScreenModes.mouseModes[mouse],
    alternateScreen: (modeBits & ModeBit.alternateScreen) !== 0,
    reverseVideo: (modeBits & ModeBit.reverseVideo) !== 0,
  });
  const bells = reader.u32();
  const scroll = reader.u16();
  if (scroll >= rows || (base === 0n && scroll !== 0)) {
    throw new SessionMessageError('scroll', `a scroll of ${scroll} rows on a screen of ${rows} (state ${state}, base ${base})`);
  }
  const titleLength = reader.u16();
  if (titleLength > SessionLimits.maximumText) {
    throw new SessionMessageError('title', `a title of ${titleLength} bytes (at most ${SessionLimits.maximumText})`);
  }
  const titleText = reader.text(titleLength);
  const title = (flags & Flag.title) !== 0 ? titleText : null;
  if (title === null && titleLength !== 0) throw new SessionMessageError('titleFlag', 'title bytes without the title flag');
  const count = reader.u16();
  // A row may come in parts, each of at least 6 bytes (index, column, run count).
  if (count > Math.floor(SessionLimits.maximumLength / MINIMUM_ROW_ENTRY)) {
    throw new SessionMessageError('rowCount', `${count} row entries in one message`);
  }
  /** @type {ScreenUpdateRow[]} */
  const lines = [];
  for (let entry = 0; entry < count; entry++) {
    const index = reader.u16();
    const word = reader.u16();
    const column = word & ~KEEPS_REST_BIT;
    if (index >= rows || column >= columns) {
      throw new SessionMessageError('row', `row ${index} from column ${column} of a ${columns}×${rows} screen`);
    }
    // In order: a later part of the same row starts after an earlier one that kept the rest.
    const last = lines.length > 0 ? lines[lines.length - 1] : null;
    if (last !== null && (index < last.index || (index === last.index && !(last.keepsRest && column >= rowEnd(last))))) {
      throw new SessionMessageError('rowOrder', `row ${index} from column ${column} out of order or overlapping`);
    }
    const cells = ScreenCellCoding.read(reader, columns - column);
    lines.push(row(index, cells, column, (word & KEEPS_REST_BIT) !== 0));
  }
  return {
    stream, state, base, inputBytes, isLastPart: (flags & Flag.lastPart) !== 0, columns, rows,
    cursor: { row: cursorRow, column: cursorColumn, visible: (modeBits & ModeBit.cursorVisible) !== 0 },
    modes, bells, scroll, title, lines,
  };
}

export const ScreenUpdate = Object.freeze({
  headerLength: HEADER_LENGTH,
  keepsRestBit: KEEPS_REST_BIT,
  row,
  rowEnd,
  write,
  read,
});
