// What a DOM layer draws for a screen: per row, spans of one style each (their text, CSS classes
// for the attributes, inline colours), the cursor, and a key per row that is equal exactly when
// the row draws the same, so that the page redraws only the rows that changed (`changedRows`).
// Pure: a TerminalScreen (and the echo predictor's overlay) in, plain data out; no DOM here.
//
// - Empty cells are spaces, so that columns line up in a monospace font (`white-space: pre`).
// - A wide character (width 2) is a span of its own covering two cells, class `t-wide` (the page
//   gives it a width of 2ch: fonts do not always draw it that wide); its right half adds no text.
//   Half a wide character is a space: the right half without its left, a left half without its
//   right (in the last column, or another character written over it), as a terminal shows them.
// - A character with combining marks is one cell: its text is the whole grapheme.
// - Colours: the terminal's defaults as the CSS variables `--term-fg` and `--term-bg`, the 16
//   ANSI colours as `--term-color-0`…`--term-color-15` (falling back to xterm's own), the rest of
//   the 256 from xterm's colour cube and grey ramp, computed; RGB as it is. A span's inline
//   style sets only the colours that are not the screen's defaults (`foreground`, `background`,
//   which the page sets on the screen's element).
// - Reverse video (SGR 7) swaps a cell's foreground and background; the screen's reverse video
//   (DECSCNM) swaps the default colours, as xterm does.
// - Attributes as classes: `t-bold`, `t-italic`, `t-underline` / `t-underline-double` /
//   `t-underline-curly`, `t-strike`, `t-blink`; `t-predicted` on a character the echo predictor
//   guessed and the computer has not shown yet.

import { TerminalScreen } from './terminal-screen.js';
import { CellStyle } from './cell-style.js';
import { ScreenCell } from './screen-cell.js';
import { applyOverlay } from './echo-predictor.js';

/** @typedef {import('./terminal-color.js').TerminalColor} TerminalColor */
/** @typedef {import('./echo-predictor.js').EchoOverlay} EchoOverlay */

/**
 * A run of cells drawn alike.
 * @typedef {object} ViewSpan
 * @property {number} column its first column
 * @property {number} cells the columns it covers
 * @property {string} text what it shows: a space for each empty cell, a wide character once
 * @property {string} className its classes, space-separated ("" for none)
 * @property {string} style its inline CSS: `color` and `background-color` where they are not the
 *   screen's defaults ("" for none)
 */

/**
 * One row: its spans left to right, covering every column, and its key (equal for two rows
 * exactly when they draw the same).
 * @typedef {object} ViewRow
 * @property {string} key
 * @property {ViewSpan[]} spans
 */

/**
 * The cursor: where it stands (within the screen), whether the program shows it, the cells it
 * covers (2 on a wide character, whose left half it then stands on) and the text under it.
 * @typedef {object} ViewCursor
 * @property {number} row
 * @property {number} column
 * @property {boolean} visible
 * @property {number} cells
 * @property {string} text
 */

/**
 * @typedef {object} ScreenViewModel
 * @property {number} rows
 * @property {number} columns
 * @property {ViewRow[]} lines
 * @property {ViewCursor} cursor
 * @property {string} foreground the screen's default foreground (CSS), for its element
 * @property {string} background the screen's default background (CSS)
 * @property {boolean} reverseVideo whether the screen is in reverse video (DECSCNM)
 */

/**
 * @typedef {object} ViewDefaults
 * @property {string} foreground
 * @property {string} background
 */

const CLASSES = Object.freeze({
  bold: 't-bold',
  italic: 't-italic',
  underline: 't-underline',
  doubleUnderline: 't-underline-double',
  curlyUnderline: 't-underline-curly',
  strike: 't-strike',
  blink: 't-blink',
  wide: 't-wide',
  predicted: 't-predicted',
});

const VARIABLES = Object.freeze({
  foreground: '--term-fg',
  background: '--term-bg',
  /** @param {number} index 0–15 */
  ansi: (index) => `--term-color-${index}`,
});

/**
 * xterm's default 16 colours (its resources color0–color15: black, red3, green3, yellow3, blue2,
 * magenta3, cyan3, gray90, gray50, red, green, yellow, rgb:5c/5c/ff, magenta, cyan, white).
 * @type {readonly (readonly [number, number, number])[]}
 */
const ANSI = Object.freeze(/** @type {[number, number, number][]} */ ([
  [0x00, 0x00, 0x00], [0xcd, 0x00, 0x00], [0x00, 0xcd, 0x00], [0xcd, 0xcd, 0x00],
  [0x00, 0x00, 0xee], [0xcd, 0x00, 0xcd], [0x00, 0xcd, 0xcd], [0xe5, 0xe5, 0xe5],
  [0x7f, 0x7f, 0x7f], [0xff, 0x00, 0x00], [0x00, 0xff, 0x00], [0xff, 0xff, 0x00],
  [0x5c, 0x5c, 0xff], [0xff, 0x00, 0xff], [0x00, 0xff, 0xff], [0xff, 0xff, 0xff],
]));

/**
 * Palette colour `index` as xterm draws it by default: the 16 ANSI colours, then (16–231) the
 * 6×6×6 cube, each component 0 or 55 + 40 × its level, then (232–255) the grey ramp 8 + 10 × n.
 * @param {number} index 0–255
 * @returns {[number, number, number]}
 */
function paletteRGB(index) {
  if (!Number.isInteger(index) || index < 0 || index > 255) throw new RangeError(`a palette index ${index}`);
  if (index < 16) return [ANSI[index][0], ANSI[index][1], ANSI[index][2]];
  if (index < 232) {
    const level = (/** @type {number} */ n) => (n === 0 ? 0 : 55 + 40 * n);
    const cube = index - 16;
    return [level(Math.floor(cube / 36)), level(Math.floor(cube / 6) % 6), level(cube % 6)];
  }
  const grey = 8 + 10 * (index - 232);
  return [grey, grey, grey];
}

/** @param {number} red @param {number} green @param {number} blue @returns {string} */
const hex = (red, green, blue) => '#' + [red, green, blue].map((c) => c.toString(16).padStart(2, '0')).join('');

/** The 256 palette colours as CSS hex, computed once. */
const PALETTE_HEX = Object.freeze(Array.from({ length: 256 }, (_, index) => hex(...paletteRGB(index))));

/**
 * A colour as CSS.
 * @param {TerminalColor} color
 * @param {string} byDefault what the default colour is in this place
 * @returns {string}
 */
function cssColor(color, byDefault) {
  switch (color.kind) {
    case 'default': return byDefault;
    case 'indexed':
      return color.index < 16 ? `var(${VARIABLES.ansi(color.index)}, ${PALETTE_HEX[color.index]})` : PALETTE_HEX[color.index];
    case 'rgb': return hex(color.red, color.green, color.blue);
  }
}

/**
 * The classes and inline style of a style.
 * @param {CellStyle} style
 * @param {ViewDefaults} defaults
 * @returns {{className: string, style: string}}
 */
function look(style, defaults) {
  const classes = [];
  const flags = style.flags;
  if (flags & CellStyle.flags.bold) classes.push(CLASSES.bold);
  if (flags & CellStyle.flags.italic) classes.push(CLASSES.italic);
  switch (style.underline) {
    case 'none': break;
    case 'single': classes.push(CLASSES.underline); break;
    case 'double': classes.push(CLASSES.doubleUnderline); break;
    case 'curly': classes.push(CLASSES.curlyUnderline); break;
  }
  if (flags & CellStyle.flags.strike) classes.push(CLASSES.strike);
  if (flags & CellStyle.flags.blink) classes.push(CLASSES.blink);
  let foreground = cssColor(style.foreground, defaults.foreground);
  let background = cssColor(style.background, defaults.background);
  if (flags & CellStyle.flags.reverse) [foreground, background] = [background, foreground];
  const inline = [];
  if (foreground !== defaults.foreground) inline.push(`color:${foreground}`);
  if (background !== defaults.background) inline.push(`background-color:${background}`);
  return { className: classes.join(' '), style: inline.join(';') };
}

/**
 * The screen's default colours: the variables, swapped under reverse video.
 * @param {boolean} reverseVideo
 * @returns {ViewDefaults}
 */
function defaultsFor(reverseVideo) {
  const foreground = `var(${VARIABLES.foreground})`;
  const background = `var(${VARIABLES.background})`;
  return reverseVideo ? { foreground: background, background: foreground } : { foreground, background };
}

/**
 * One row of cells as spans, with its key.
 * @param {readonly ScreenCell[]} cells
 * @param {{reverseVideo?: boolean, predicted?: ReadonlySet<number>}} [options] the screen's
 *   reverse video; the columns that show a guess of the echo predictor
 * @returns {ViewRow}
 */
function row(cells, options = {}) {
  const defaults = defaultsFor(options.reverseVideo ?? false);
  const predicted = options.predicted;
  /** @type {ViewSpan[]} */
  const spans = [];
  /** @type {Map<CellStyle, {className: string, style: string}>} */
  const looks = new Map();
  const columns = cells.length;
  /** @type {ViewSpan | null} */
  let open = null; // the span the next narrow cell may join
  for (let column = 0; column < columns; column++) {
    const cell = cells[column];
    if (cell.width === 0 && column > 0 && cells[column - 1].width === 2) continue; // drawn with its left half
    let styleLook = looks.get(cell.style);
    if (styleLook === undefined) {
      styleLook = look(cell.style, defaults);
      looks.set(cell.style, styleLook);
    }
    let className = styleLook.className;
    if (predicted !== undefined && predicted.has(column)) {
      className = className === '' ? CLASSES.predicted : `${className} ${CLASSES.predicted}`;
    }
    if (cell.width === 2 && column + 1 < columns && cells[column + 1].width === 0) {
      spans.push({
        column, cells: 2, text: cell.text === '' ? ' ' : cell.text,
        className: className === '' ? CLASSES.wide : `${className} ${CLASSES.wide}`, style: styleLook.style,
      });
      open = null;
      continue;
    }
    // An empty cell, half a wide character (a right half alone, a left half without its right:
    // in the last column, or another character over its right half): a space.
    const text = cell.text === '' || cell.width !== 1 ? ' ' : cell.text;
    if (open !== null && open.className === className && open.style === styleLook.style) {
      open.text += text;
      open.cells += 1;
    } else {
      open = { column, cells: 1, text, className, style: styleLook.style };
      spans.push(open);
    }
  }
  let key = '';
  for (const span of spans) {
    // Lengths before the parts: no two different rows make one key.
    key += `${span.cells}:${span.className.length}:${span.className}${span.style.length}:${span.style}${span.text.length}:${span.text}`;
  }
  return { key, spans };
}

/**
 * The render model of `screen`, with the echo predictor's guesses laid over it when given (the
 * predictor's `overlay`: its characters marked `t-predicted`, the cursor after them).
 * @param {TerminalScreen} screen
 * @param {{predictions?: EchoOverlay | null}} [options]
 * @returns {ScreenViewModel}
 */
function make(screen, options = {}) {
  const predictions = options.predictions ?? null;
  const drawn = predictions === null ? screen : applyOverlay(screen, predictions);
  const rows = TerminalScreen.rows(drawn);
  const columns = TerminalScreen.columns(drawn);
  const reverseVideo = drawn.modes.reverseVideo;
  /** @type {Map<number, Set<number>>} */
  const predicted = new Map();
  for (const guess of predictions?.cells ?? []) {
    if (!guess.underlined) continue;
    const set = predicted.get(guess.row) ?? new Set();
    set.add(guess.column);
    predicted.set(guess.row, set);
  }
  const lines = drawn.lines.map((cells, index) => row(cells, { reverseVideo, predicted: predicted.get(index) }));
  const defaults = defaultsFor(reverseVideo);
  return {
    rows, columns, lines, cursor: cursorOf(drawn), reverseVideo,
    foreground: defaults.foreground, background: defaults.background,
  };
}

/**
 * @param {TerminalScreen} screen
 * @returns {ViewCursor}
 */
function cursorOf(screen) {
  const rows = TerminalScreen.rows(screen);
  const columns = TerminalScreen.columns(screen);
  const row = Math.max(0, Math.min(screen.cursor.row, rows - 1));
  let column = Math.max(0, Math.min(screen.cursor.column, columns - 1));
  let cells = 1;
  let text = ' ';
  if (rows > 0 && columns > 0) {
    const line = screen.lines[row];
    if (line[column].width === 0 && column > 0 && line[column - 1].width === 2) column -= 1;
    const cell = line[column];
    if (cell.width === 2 && column + 1 < columns && line[column + 1].width === 0) cells = 2;
    if (cell.text !== '' && (cell.width === 1 || cells === 2)) text = cell.text;
  }
  return { row, column, visible: screen.cursor.visible, cells, text };
}

/**
 * The rows of `next` to draw again after `previous`: those whose key changed, or every row when
 * there was no model before or the size or default colours changed. The cursor is the page's to
 * compare (`cursor`).
 * @param {ScreenViewModel | null} previous
 * @param {ScreenViewModel} next
 * @returns {number[]}
 */
function changedRows(previous, next) {
  const all = () => next.lines.map((_, index) => index);
  if (previous === null || previous.rows !== next.rows || previous.columns !== next.columns ||
    previous.foreground !== next.foreground || previous.background !== next.background) return all();
  const changed = [];
  for (let index = 0; index < next.lines.length; index++) {
    if (previous.lines[index].key !== next.lines[index].key) changed.push(index);
  }
  return changed;
}

export const ScreenViewModel = Object.freeze({
  make,
  row,
  changedRows,
  /** The classes a span may have. */
  classes: CLASSES,
  /** The CSS variables the colours use. */
  variables: VARIABLES,
  paletteRGB,
  /** The 256 palette colours as `#rrggbb`, as xterm draws them by default. */
  paletteHex: PALETTE_HEX,
});
