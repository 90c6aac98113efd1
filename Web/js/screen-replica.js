// The device's copy of a screen session's screen (docs/companion.md, "Screen sessions"), kept
// from the computer's `screen` messages: each part applied as it comes, a state complete at its
// last part. Checks what the computer may not do (a base it does not hold, parts of two states
// mixed, a scroll on a screen of another size) and says so. The twin of ScreenReplica.

import { ScreenCell } from './screen-cell.js';
import { TerminalScreen } from './terminal-screen.js';
import { ScreenModes } from './screen-modes.js';

/** @typedef {import('./screen-update.js').ScreenUpdate} ScreenUpdate */

/**
 * What one message did:
 * - `partial`: a part applied; more of the state follow.
 * - `complete`: state `state` is complete: draw it and acknowledge it; `rang` is whether the
 *   bell rang since the state before (never for a whole state).
 * - `broken`: the computer broke the protocol (`reason` says how): the session cannot go on.
 * @typedef {{kind: 'partial'} | {kind: 'complete', state: bigint, rang: boolean} | {kind: 'broken', reason: string}} ScreenReplicaOutcome
 */

/** @type {ScreenReplicaOutcome} */
const PARTIAL = Object.freeze({ kind: /** @type {const} */ ('partial') });

/**
 * @param {string} reason
 * @returns {ScreenReplicaOutcome}
 */
function broken(reason) {
  return { kind: 'broken', reason };
}

export class ScreenReplica {
  constructor() {
    /**
     * The screen as the parts so far made it. Read it at a `complete` outcome; do not change it.
     * @type {TerminalScreen}
     */
    this.screen = TerminalScreen.make([[ScreenCell.blank]], { row: 0, column: 0, visible: true });
    /** The last complete state, 0 before one. */
    this.state = 0n;
    /** The input bytes the program had had time to echo at that state. */
    this.inputBytes = 0n;
    /** The bells of the last complete state. */
    this.bells = 0;
    /**
     * The state whose parts are arriving, if one is.
     * @private
     * @type {bigint | null}
     */
    this.arriving = null;
  }

  /**
   * Applies one part (a `screen` message's update, as `SessionMessage.parse` gave it).
   * @param {ScreenUpdate} update
   * @returns {ScreenReplicaOutcome}
   */
  apply(update) {
    const screen = this.screen;
    if (this.arriving !== null) {
      if (update.state !== this.arriving) {
        return broken(`screen state ${update.state} began before state ${this.arriving} ended`);
      }
    } else {
      if (update.state <= this.state) return broken(`screen state ${update.state} came after state ${this.state}`);
      if (update.base !== 0n && update.base !== this.state) {
        return broken(`screen state ${update.state} changes state ${update.base}, but this device has ${this.state}`);
      }
      const sized = update.rows === TerminalScreen.rows(screen) && update.columns === TerminalScreen.columns(screen);
      if (update.base !== 0n && !sized && update.scroll !== 0) {
        return broken(`screen state ${update.state} scrolls a screen of another size`);
      }
      if (update.base === 0n || !sized) screen.lines = TerminalScreen.blankLines(update.columns, update.rows);
      if (update.scroll > 0) {
        // (The parser holds the scroll below the rows; a hand-made update is held there too.)
        const scroll = Math.min(update.scroll, update.rows);
        screen.lines.splice(0, scroll);
        screen.lines.push(...TerminalScreen.blankLines(update.columns, scroll));
      }
      if (update.base === 0n) screen.title = '';
      this.arriving = update.state;
    }
    if (update.rows !== TerminalScreen.rows(screen) || update.columns !== TerminalScreen.columns(screen)) {
      return broken(`the parts of screen state ${update.state} disagree on its size`);
    }
    for (const row of update.lines) {
      // The parser checks these; an update made by hand cannot reach past the screen either.
      const end = row.column + row.cells.length;
      if (!(row.index >= 0 && row.index < update.rows && row.column >= 0 && end <= update.columns)) {
        return broken(`row ${row.index} from column ${row.column} of a ${update.columns}×${update.rows} screen`);
      }
      const line = screen.lines[row.index];
      for (let i = 0; i < row.cells.length; i++) line[row.column + i] = row.cells[i];
      if (!row.keepsRest) line.fill(ScreenCell.blank, end);
    }
    if (update.title !== null) screen.title = update.title;
    screen.cursor = { ...update.cursor };
    screen.modes = ScreenModes.make(update.modes);
    if (!update.isLastPart) return PARTIAL;
    this.arriving = null;
    this.state = update.state;
    this.inputBytes = update.inputBytes;
    const rang = update.bells !== this.bells && update.base !== 0n;
    this.bells = update.bells;
    return { kind: 'complete', state: this.state, rang };
  }

  /** A new connection: the computer starts again with a whole state; a half-arrived one is gone. */
  restart() {
    this.arriving = null;
  }
}
