// Predictive local echo for a screen session, as mosh's client does it: a character typed on a
// line is shown at once where the program would echo it, marked (underlined) until a screen from
// the computer shows it; a prediction the computer's screen refutes (the program did not echo: a
// password, a full-screen program, a command that drew something else) is withdrawn, and
// predictions are then made but not shown until one comes true again. Pure: the keys and the
// computer's screens in, with the time; the screen to draw out (`display`), or only what to lay
// over the computer's screen (`overlay`). The twin of HerdrKit's EchoPredictor, rule for rule.
//
// A prediction is judged by the input count of the computer's screens (a `screen` message's
// `input`, ScreenReplica's `inputBytes`: the bytes the program had had 50 ms to echo): once a
// screen covers a key, the key's echo was either seen by then or it is not coming. Only
// printable ASCII and backspace on the current line are predicted (the last column wrapping to
// the next row); any other key (Enter, an arrow, a control character) stops predicting until the
// computer covers it, the keys typed meanwhile counted so that guesses resume after them, and
// nothing is predicted on the alternate screen, where full-screen programs draw as they like.
//
// Times are seconds (any monotonic clock: `performance.now() / 1000`); input counts are bigints,
// as the session messages carry them (u64).

import { CellStyle } from './cell-style.js';
import { ScreenCell } from './screen-cell.js';
import { TerminalScreen } from './terminal-screen.js';

/**
 * When predictions are shown (`connect --predict`):
 * - `always`: whenever they are believed.
 * - `never`: never: the screen is the computer's alone.
 * - `adaptive`: when keys take longer than `adaptiveThreshold` to echo (mosh's default).
 * @typedef {'always' | 'never' | 'adaptive'} EchoPredictionMode
 */

/**
 * The part of a complete screen state the predictor reads (Swift's ScreenFrame): the screen, and
 * the input bytes the program had had time to echo at that state (ScreenReplica's `screen` and
 * `inputBytes` at a `complete` outcome). The predictor keeps a copy of the screen's rows: the
 * replica may go on changing its own.
 * @typedef {object} ScreenFrame
 * @property {TerminalScreen} screen
 * @property {bigint} inputBytes
 */

/**
 * One predicted cell to lay over the computer's screen: `cell` is the character, underlined, or
 * a blank (not underlined) where a backspace erases one.
 * @typedef {object} PredictedCell
 * @property {number} row
 * @property {number} column
 * @property {ScreenCell} cell
 * @property {boolean} underlined whether it is drawn as a guess (a character, not an erase)
 */

/**
 * What the predictions change on the computer's latest screen while they are shown: cells (at
 * most one a position, the latest guess there) and the cursor after them (null: the computer's).
 * @typedef {object} EchoOverlay
 * @property {PredictedCell[]} cells
 * @property {{row: number, column: number} | null} cursor
 */

/**
 * @typedef {object} Prediction
 * @property {bigint} input the input count once this key is sent: a screen covering it judges it
 * @property {number} row
 * @property {number} column
 * @property {string} text the text the cell will show: the character, or "" for a backspace's erase
 * @property {number} typedAt
 * @property {number | null} seenAt when a screen from the computer first showed it
 * @property {{row: number, column: number}} after where the cursor stands after this key (the
 *   next row's start after the last column, as a terminal wraps)
 */

/** @type {readonly EchoPredictionMode[]} */
const MODES = Object.freeze(['always', 'never', 'adaptive']);

/** A predicted character's style: plain, underlined once. */
const PREDICTED_STYLE = CellStyle.make({ underline: 'single' });

export class EchoPredictor {
  /** Every mode, as `connect --predict` takes them. */
  static modes = MODES;
  /** The echo time (seconds) above which `adaptive` shows predictions: mosh's 30 ms. */
  static adaptiveThreshold = 0.030;

  /** Input bytes typed in the session so far (the computer counts the same bytes). */
  #typed = 0n;
  /** @type {Prediction[]} */
  #pending = [];
  /** Nothing is predicted until the computer covered input up to here (a key not guessed). */
  #holdUntil = 0n;
  /**
   * Printable keys and backspaces typed while holding, not drawn: once the hold ends, those the
   * computer has not covered yet still move its cursor (by `advance`) when they arrive.
   * @type {{input: bigint, advance: number}[]}
   */
  #blind = [];
  /** Whether predictions are shown: false after a wrong one, until one comes true. */
  #trusted = true;
  /**
   * The latest screen from the computer (a copy), and the input it covers.
   * @type {ScreenFrame | null}
   */
  #latest = null;
  /**
   * Smoothed seconds from a key to a screen showing it (RFC 6298's gain of 1/8).
   * @type {number | null}
   */
  #echoTime = null;

  /** @param {EchoPredictionMode} mode */
  constructor(mode) {
    if (!MODES.includes(mode)) throw new RangeError(`an echo prediction mode ${mode} (always, never or adaptive)`);
    /** @readonly @type {EchoPredictionMode} */
    this.mode = mode;
  }

  /** Smoothed seconds from a key to a screen showing it; null before the first echo seen. */
  get echoTime() {
    return this.#echoTime;
  }

  /** Whether predictions are drawn now. */
  get isShowing() {
    if (!this.#trusted) return false;
    switch (this.mode) {
      case 'always': return true;
      case 'never': return false;
      case 'adaptive': return (this.#echoTime ?? 0) > EchoPredictor.adaptiveThreshold;
    }
  }

  /**
   * The person typed `bytes` at `now` (seconds); they go to the computer in this order.
   * @param {Uint8Array | readonly number[]} bytes
   * @param {number} now
   */
  typed(bytes, now) {
    for (const byte of bytes) {
      this.#typed += 1n;
      if (this.mode === 'never') continue;
      const guessable = (byte >= 0x20 && byte <= 0x7e) || byte === 0x7f || byte === 0x08;
      const frame = this.#latest;
      if (frame === null || frame.screen.modes.alternateScreen || frame.inputBytes < this.#holdUntil) {
        // Keys typed while holding do not prolong the hold (someone typing faster than the round
        // trip would never see a guess again): a guessable one is counted.
        if (guessable) {
          this.#blind.push({ input: this.#typed, advance: byte >= 0x20 && byte !== 0x7f ? 1 : -1 });
        } else {
          this.#holdUntil = this.#typed;
        }
        continue;
      }
      const screen = frame.screen;
      const rows = TerminalScreen.rows(screen);
      const columns = TerminalScreen.columns(screen);
      const { row, column } = this.#cursor(screen);
      // The last column wraps to the next row; on the last row it would scroll: not guessed.
      const wraps = column >= columns - 1;
      if (byte >= 0x20 && byte <= 0x7e && row < rows && column < columns && (!wraps || row + 1 < rows)) {
        this.#pending.push({
          input: this.#typed, row, column, text: String.fromCharCode(byte), typedAt: now, seenAt: null,
          after: wraps ? { row: row + 1, column: 0 } : { row, column: column + 1 },
        });
      } else if ((byte === 0x7f || byte === 0x08) && column > 0 && column < columns) {
        this.#pending.push({
          input: this.#typed, row, column: column - 1, text: '', typedAt: now, seenAt: null,
          after: { row, column: column - 1 },
        });
      } else {
        // Enter, an escape sequence, a multibyte character, the end of the line: what the
        // program does with it is not a guess worth drawing.
        this.#holdUntil = this.#typed;
      }
    }
  }

  /**
   * A complete screen from the computer at `now` (seconds): predictions it shows are seen, and
   * those it covers are judged.
   * @param {ScreenFrame} frame
   * @param {number} now
   */
  received(frame, now) {
    const screen = frame.screen;
    const copy = TerminalScreen.make(screen.lines.map((line) => line.slice()), screen.cursor, screen.modes, screen.title);
    this.#latest = { screen: copy, inputBytes: frame.inputBytes };
    this.#blind = this.#blind.filter((key) => key.input > frame.inputBytes);
    for (const prediction of this.#pending) {
      if (prediction.seenAt !== null || !shows(copy, prediction)) continue;
      prediction.seenAt = now;
      const sample = now - prediction.typedAt;
      this.#echoTime = this.#echoTime === null ? sample : 0.875 * this.#echoTime + 0.125 * sample;
    }
    while (this.#pending.length > 0 && this.#pending[0].input <= frame.inputBytes) {
      if (this.#pending[0].seenAt === null) {
        // The program had time to echo it and did not: every guess after it goes too.
        this.#pending = [];
        this.#trusted = false;
        return;
      }
      this.#trusted = true;
      this.#pending.shift();
    }
  }

  /**
   * What the predictions the computer's latest screen does not show yet change on it, while they
   * are shown (no cells and the computer's cursor when they are not); null before a screen.
   * @returns {EchoOverlay | null}
   */
  get overlay() {
    const frame = this.#latest;
    if (frame === null) return null;
    if (!this.isShowing) return { cells: [], cursor: null };
    const rows = TerminalScreen.rows(frame.screen);
    const columns = TerminalScreen.columns(frame.screen);
    /** @type {Map<number, PredictedCell>} */
    const cells = new Map();
    /** @type {{row: number, column: number} | null} */
    let cursor = null;
    for (const prediction of this.#pending) {
      if (prediction.seenAt !== null) continue;
      if (prediction.row >= rows || prediction.column >= columns) continue;
      const key = prediction.row * columns + prediction.column;
      cells.delete(key); // the latest guess at a position, in the order they were made
      cells.set(key, {
        row: prediction.row,
        column: prediction.column,
        cell: prediction.text === '' ? ScreenCell.blank : ScreenCell.make(prediction.text, 1, PREDICTED_STYLE),
        underlined: prediction.text !== '',
      });
      cursor = prediction.after;
    }
    if (cursor !== null) {
      cursor = { row: Math.min(cursor.row, rows - 1), column: Math.min(cursor.column, columns - 1) };
    }
    return { cells: [...cells.values()], cursor };
  }

  /**
   * The screen to draw: the computer's latest, with the predictions it does not show yet drawn
   * underlined and the cursor after them (while they are shown); null before a screen. A new
   * screen each time (the rows it does not change are shared with the predictor's copy: do not
   * change them).
   * @returns {TerminalScreen | null}
   */
  get display() {
    const frame = this.#latest;
    const overlay = this.overlay;
    if (frame === null || overlay === null) return null;
    return applyOverlay(frame.screen, overlay);
  }

  /**
   * Where the next key's echo goes: after the last prediction not yet seen, else the computer's
   * cursor. A cursor on a written last column is taken to wait to wrap, as a terminal's does
   * after writing there.
   * @param {TerminalScreen} screen
   * @returns {{row: number, column: number}}
   */
  #cursor(screen) {
    for (let index = this.#pending.length - 1; index >= 0; index--) {
      if (this.#pending[index].seenAt === null) return this.#pending[index].after;
    }
    const rows = TerminalScreen.rows(screen);
    const columns = TerminalScreen.columns(screen);
    const cursor = screen.cursor;
    if (cursor.column === columns - 1 && cursor.row < rows && screen.lines[cursor.row][cursor.column].text !== '') {
      return { row: cursor.row + 1, column: 0 };
    }
    // Keys typed blind that the computer has not covered land after its cursor.
    const column = cursor.column + this.#blind.reduce((sum, key) => sum + key.advance, 0);
    return { row: cursor.row, column: column < 0 ? columns : column };
  }
}

/**
 * `screen` with `overlay` laid over it: a new screen, sharing the rows the overlay leaves alone.
 * @param {TerminalScreen} screen
 * @param {EchoOverlay} overlay
 * @returns {TerminalScreen}
 */
export function applyOverlay(screen, overlay) {
  const lines = screen.lines.slice();
  /** @type {Set<number>} */
  const copied = new Set();
  for (const { row, column, cell } of overlay.cells) {
    if (row < 0 || row >= lines.length || column < 0 || column >= lines[row].length) continue;
    if (!copied.has(row)) {
      lines[row] = lines[row].slice();
      copied.add(row);
    }
    lines[row][column] = cell;
  }
  const cursor = overlay.cursor === null ? screen.cursor : { ...screen.cursor, ...overlay.cursor };
  return TerminalScreen.make(lines, cursor, screen.modes, screen.title);
}

/**
 * Whether `screen` shows `prediction`: its character there, or for an erase an empty cell or a
 * space.
 * @param {TerminalScreen} screen
 * @param {Prediction} prediction
 * @returns {boolean}
 */
function shows(screen, prediction) {
  if (prediction.row >= TerminalScreen.rows(screen) || prediction.column >= TerminalScreen.columns(screen)) return false;
  const text = screen.lines[prediction.row][prediction.column].text;
  return prediction.text === '' ? text === '' || text === ' ' : text === prediction.text;
}
