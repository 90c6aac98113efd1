// One cell of the screen: the character shown there (a base and its combining marks), its
// width, and its style. The twin of ScreenModel's ScreenCell. Values are frozen; compare them
// with `equal`.

import { CellStyle } from './cell-style.js';

/**
 * @typedef {object} ScreenCell
 * @property {string} text one grapheme, or "" for an empty cell and for the right half of a
 *   wide character
 * @property {number} width 1, 2 for a wide character (CJK, most emoji) whose right half is the
 *   next cell, 0 for that right half
 * @property {CellStyle} style
 */

/**
 * @param {string} text
 * @param {number} [width]
 * @param {CellStyle} [style]
 * @returns {ScreenCell}
 */
function make(text, width = 1, style = CellStyle.plain) {
  if (!Number.isInteger(width) || width < 0 || width > 2) throw new RangeError(`a cell of width ${width}`);
  return Object.freeze({ text, width, style });
}

export const ScreenCell = Object.freeze({
  make,
  /** An empty cell of a cleared screen. */
  blank: make(''),

  /**
   * @param {ScreenCell} a
   * @param {ScreenCell} b
   * @returns {boolean}
   */
  equal(a, b) {
    return a === b || (a.text === b.text && a.width === b.width && CellStyle.equal(a.style, b.style));
  },

  /**
   * @param {readonly ScreenCell[]} a
   * @param {readonly ScreenCell[]} b
   * @returns {boolean}
   */
  rowsEqual(a, b) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!ScreenCell.equal(a[i], b[i])) return false;
    return true;
  },
});
