// How a cell's text is drawn: its colours and attributes (SGR). The twin of ScreenModel's
// CellStyle. Values are frozen; compare them with `equal`.

import { TerminalColor } from './terminal-color.js';

/**
 * SGR 4 (single), 21 (double), `4:3` (curly), 24 (off); the raw value is the index in
 * `CellStyle.underlines`.
 * @typedef {'none' | 'single' | 'double' | 'curly'} Underline
 */

/**
 * @typedef {object} CellStyle
 * @property {TerminalColor} foreground
 * @property {TerminalColor} background
 * @property {number} flags the attributes that are on: a sum of `CellStyle.flags`
 * @property {Underline} underline
 */

/** @type {readonly Underline[]} */
const UNDERLINES = Object.freeze(['none', 'single', 'double', 'curly']);

/** The attributes, as bits of `flags` (CellStyle.Flags). */
const FLAGS = Object.freeze({ bold: 1, italic: 2, blink: 4, reverse: 8, strike: 16 });
const ALL_FLAGS = 0x1f;

/**
 * @param {Partial<CellStyle>} [parts]
 * @returns {CellStyle}
 */
function make(parts = {}) {
  const flags = parts.flags ?? 0;
  if (!Number.isInteger(flags) || flags < 0 || (flags & ~ALL_FLAGS) !== 0) {
    throw new RangeError(`cell attributes ${flags} with unknown bits`);
  }
  const underline = parts.underline ?? 'none';
  if (!UNDERLINES.includes(underline)) throw new RangeError(`an underline of kind ${underline}`);
  return Object.freeze({
    foreground: parts.foreground ?? TerminalColor.default,
    background: parts.background ?? TerminalColor.default,
    flags,
    underline,
  });
}

export const CellStyle = Object.freeze({
  flags: FLAGS,
  /** Every attribute bit. */
  allFlags: ALL_FLAGS,
  underlines: UNDERLINES,
  make,
  /** The style of a cleared screen. */
  plain: make(),

  /**
   * @param {CellStyle} a
   * @param {CellStyle} b
   * @returns {boolean}
   */
  equal(a, b) {
    return a === b || (a.flags === b.flags && a.underline === b.underline &&
      TerminalColor.equal(a.foreground, b.foreground) && TerminalColor.equal(a.background, b.background));
  },
});
