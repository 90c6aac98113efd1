// A terminal's screen at one moment: its cells row by row, the cursor, the modes and the title.
// What a screen session's computer keeps and its device draws. The twin of ScreenModel's
// TerminalScreen.

import { ScreenCell } from './screen-cell.js';
import { ScreenModes } from './screen-modes.js';

/**
 * @typedef {object} Cursor
 * @property {number} row
 * @property {number} column
 * @property {boolean} visible
 */

/**
 * @typedef {object} TerminalScreen
 * @property {ScreenCell[][]} lines `rows` rows of `columns` cells each
 * @property {Cursor} cursor
 * @property {ScreenModes} modes
 * @property {string} title the window title the program set (OSC 0 or 2), "" when none
 */

export const TerminalScreen = Object.freeze({
  /**
   * @param {ScreenCell[][]} lines
   * @param {Cursor} cursor
   * @param {ScreenModes} [modes]
   * @param {string} [title]
   * @returns {TerminalScreen}
   */
  make(lines, cursor, modes = ScreenModes.make(), title = '') {
    return { lines, cursor: { ...cursor }, modes: { ...modes }, title };
  },

  /**
   * `rows` rows of `columns` blank cells.
   * @param {number} columns
   * @param {number} rows
   * @returns {ScreenCell[][]}
   */
  blankLines(columns, rows) {
    const lines = [];
    for (let row = 0; row < rows; row++) lines.push(new Array(columns).fill(ScreenCell.blank));
    return lines;
  },

  /** @param {TerminalScreen} screen @returns {number} */
  rows(screen) {
    return screen.lines.length;
  },

  /** @param {TerminalScreen} screen @returns {number} */
  columns(screen) {
    return screen.lines.length > 0 ? screen.lines[0].length : 0;
  },

  /**
   * Row `row`'s text with trailing blanks removed, wide characters once.
   * @param {TerminalScreen} screen
   * @param {number} row
   * @returns {string}
   */
  textOfRow(screen, row) {
    let text = '';
    let pendingSpaces = 0;
    for (const cell of screen.lines[row]) {
      if (cell.width === 0) continue;
      if (cell.text === '' || cell.text === ' ') {
        pendingSpaces += 1;
      } else {
        text += ' '.repeat(pendingSpaces) + cell.text;
        pendingSpaces = 0;
      }
    }
    return text;
  },

  /**
   * @param {TerminalScreen} a
   * @param {TerminalScreen} b
   * @returns {boolean}
   */
  equal(a, b) {
    if (a.title !== b.title || !ScreenModes.equal(a.modes, b.modes)) return false;
    if (a.cursor.row !== b.cursor.row || a.cursor.column !== b.cursor.column ||
      a.cursor.visible !== b.cursor.visible) return false;
    if (a.lines.length !== b.lines.length) return false;
    for (let row = 0; row < a.lines.length; row++) {
      if (!ScreenCell.rowsEqual(a.lines[row], b.lines[row])) return false;
    }
    return true;
  },
});
