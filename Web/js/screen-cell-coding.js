// How cells cross the channel, in `screen` and `scrollback` messages (docs/companion.md, "Screen
// sessions"): runs of cells of one style. A run whose cells are each one character or empty, of
// width 1 (most text), is a text run: its text (an empty cell a NUL); any other run is each cell
// as a byte holding its width and the length of its text, then the text. The twin of
// ScreenCellCoding.

import { SessionLimits, SessionMessageError, utf8Prefix } from './session-wire.js';
import { utf8 } from './bytes.js';
import { TerminalColor } from './terminal-color.js';
import { CellStyle } from './cell-style.js';
import { ScreenCell } from './screen-cell.js';

/** @typedef {import('./session-wire.js').Writer} Writer */
/** @typedef {import('./session-wire.js').Reader} Reader */

/**
 * The longest text of one cell, in bytes: the six low bits of its head byte hold at most 32
 * ("the length of its text (low six bits, ≤ 32)"; libvterm keeps at most 6 code points a cell, 24 bytes).
 */
const MAXIMUM_CELL_TEXT = 32;

/** The top bit of a run's cell count: the run is a text run. */
const TEXT_RUN_BIT = 0x8000;

/** A text run's text holds at most 4 bytes a cell (one code point of UTF-8). */
const MAXIMUM_TEXT_RUN_BYTES_PER_CELL = 4;

/**
 * Whether `cell` goes in a text run: width 1, and one character (a single code point, not NUL)
 * or none.
 * @param {ScreenCell} cell
 */
function isCharacter(cell) {
  if (cell.width !== 1) return false;
  const text = cell.text;
  if (text.length === 0) return true;
  const first = /** @type {number} */ (text.codePointAt(0));
  return first !== 0 && text.length === (first > 0xffff ? 2 : 1);
}

/**
 * Whether every cell of `cells` from `start` to `end` goes in a text run.
 * @param {readonly ScreenCell[]} cells
 * @param {number} start
 * @param {number} end
 */
function allCharacters(cells, start, end) {
  for (let index = start; index < end; index++) if (!isCharacter(cells[index])) return false;
  return true;
}

/** @param {TerminalColor} color @param {Writer} out */
function writeColor(color, out) {
  switch (color.kind) {
    case 'default':
      out.u8(0);
      break;
    case 'indexed':
      out.u8(1);
      out.u8(color.index);
      break;
    case 'rgb':
      out.u8(2);
      out.u8(color.red);
      out.u8(color.green);
      out.u8(color.blue);
      break;
  }
}

/** @param {CellStyle} style @param {Writer} out */
function writeStyle(style, out) {
  writeColor(style.foreground, out);
  writeColor(style.background, out);
  out.u8(style.flags);
  out.u8(CellStyle.underlines.indexOf(style.underline));
}

/**
 * The bytes of `cells` as runs: the run count, then each run's style, cell count and cells (a
 * text run's text, or each cell). A cell's text is cut to 32 bytes at a code point's boundary; a
 * width over 2 is written as 2.
 * @param {readonly ScreenCell[]} cells
 * @param {Writer} out
 */
function write(cells, out) {
  /** @type {number[]} */
  const starts = [];
  for (let index = 0; index < cells.length; index++) {
    if (index === 0 || !CellStyle.equal(cells[index - 1].style, cells[index].style)) starts.push(index);
  }
  out.u16(starts.length);
  for (let number = 0; number < starts.length; number++) {
    const start = starts[number];
    const end = number + 1 < starts.length ? starts[number + 1] : cells.length;
    writeStyle(cells[start].style, out);
    if (allCharacters(cells, start, end)) {
      out.u16((end - start) | TEXT_RUN_BIT);
      let text = '';
      for (let index = start; index < end; index++) text += cells[index].text === '' ? '\u0000' : cells[index].text;
      const bytes = utf8(text);
      out.u16(bytes.length);
      out.bytes(bytes);
      continue;
    }
    out.u16(end - start);
    for (let index = start; index < end; index++) {
      const cell = cells[index];
      const text = utf8Prefix(cell.text, MAXIMUM_CELL_TEXT);
      out.u8((Math.min(cell.width, 2) << 6) | text.length);
      out.bytes(text);
    }
  }
}

/** @param {Reader} reader @returns {TerminalColor} */
function readColor(reader) {
  const tag = reader.u8();
  switch (tag) {
    case 0:
      return TerminalColor.default;
    case 1:
      return TerminalColor.indexed(reader.u8());
    case 2:
      return TerminalColor.rgb(reader.u8(), reader.u8(), reader.u8());
    default:
      throw new SessionMessageError('colour', `a colour of kind ${tag} (0 to 2)`);
  }
}

/** @param {Reader} reader @returns {CellStyle} */
function readStyle(reader) {
  const foreground = readColor(reader);
  const background = readColor(reader);
  const flags = reader.u8();
  if ((flags & ~CellStyle.allFlags) !== 0) {
    throw new SessionMessageError('attributes', `cell attributes ${flags} with unknown bits`);
  }
  const raw = reader.u8();
  if (raw >= CellStyle.underlines.length) {
    throw new SessionMessageError('underline', `an underline of kind ${raw} (0 to 3)`);
  }
  return CellStyle.make({ foreground, background, flags, underline: CellStyle.underlines[raw] });
}

/**
 * The cells `write` wrote, at most `limit` of them; throws a `SessionMessageError` for anything
 * out of bounds: a second run of the style before it, an empty run, more than `limit` cells, a
 * text run of more than 4 bytes a cell or not one code point a cell, a run of characters sent
 * cell by cell (one encoding for each row), a width of 3, more than 32 bytes of a cell's text,
 * text that is not UTF-8.
 * @param {Reader} reader
 * @param {number} limit
 * @returns {ScreenCell[]}
 */
function read(reader, limit) {
  const runs = reader.u16();
  /** @type {ScreenCell[]} */
  const cells = [];
  for (let run = 0; run < runs; run++) {
    const style = readStyle(reader);
    if (cells.length > 0 && CellStyle.equal(style, cells[cells.length - 1].style)) {
      throw new SessionMessageError('runStyle', 'two runs of one style side by side');
    }
    const word = reader.u16();
    const count = word & ~TEXT_RUN_BIT;
    if (count === 0 || cells.length + count > limit) {
      throw new SessionMessageError('runLength', `a row of more than ${limit} cells, or an empty run`);
    }
    if ((word & TEXT_RUN_BIT) !== 0) {
      const length = reader.u16();
      if (length > count * MAXIMUM_TEXT_RUN_BYTES_PER_CELL) {
        throw new SessionMessageError('textRun', `${length} bytes of text for ${count} cells`);
      }
      // One code point a cell (the text is checked UTF-8: no lone surrogates).
      const characters = Array.from(reader.text(length));
      if (characters.length !== count) {
        throw new SessionMessageError('textRun', `a text run of ${count} cells with ${characters.length} characters`);
      }
      for (const character of characters) cells.push(ScreenCell.make(character === '\u0000' ? '' : character, 1, style));
      continue;
    }
    const first = cells.length;
    for (let index = 0; index < count; index++) {
      const head = reader.u8();
      const width = head >>> 6;
      const length = head & 0x3f;
      if (width > 2 || length > MAXIMUM_CELL_TEXT) {
        throw new SessionMessageError('cell', `a cell of width ${width} with ${length} bytes of text`);
      }
      cells.push(ScreenCell.make(reader.text(length), width, style));
    }
    // One encoding for each row: a run that could be a text run is one.
    if (allCharacters(cells, first, cells.length)) {
      throw new SessionMessageError('runEncoding', 'a run of characters not sent as its text');
    }
  }
  return cells;
}

export const ScreenCellCoding = Object.freeze({
  maximumCellText: MAXIMUM_CELL_TEXT,
  textRunBit: TEXT_RUN_BIT,
  isCharacter,
  /** The most cells of one row (the session protocol's bound on columns). */
  maximumCells: SessionLimits.maximumCells,
  write,
  read,
});
