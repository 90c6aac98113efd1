// A test-only encoder of screen states, the computer's side that the browser never runs: the
// change from one screen to the next as the Swift side computes it (ScreenDiff: a scroll, then
// the rows that differ, each as the cells that changed), cut into `screen` messages that fit one
// frame (ScreenParts), numbered as ScreenStateSender numbers them (without its pacing). It lets
// the tests drive screen-replica.js with the messages a computer would send.

import { SessionMessage } from '../js/session-message.js';
import { ScreenUpdate } from '../js/screen-update.js';
import { ScreenCellCoding } from '../js/screen-cell-coding.js';
import { ScreenCell } from '../js/screen-cell.js';
import { TerminalScreen } from '../js/terminal-screen.js';
import { SessionLimits, Writer, utf8Prefix } from '../js/session-wire.js';

/** @typedef {import('../js/screen-update.js').ScreenUpdateRow} Row */
/** @typedef {import('../js/session-message.js').SessionMessage} SessionMessageValue */

/** Unchanged cells between two changes that are sent anyway rather than starting another entry. */
export const GAP_WORTH_SKIPPING = 12;

/**
 * The bytes `row` takes in a `screen` message: its index, its column and its cells.
 * @param {Row} row
 */
export function encodedLength(row) {
  const out = new Writer();
  ScreenCellCoding.write(row.cells, out);
  return 4 + out.length;
}

/**
 * Row `index` of `screen` as sent: trailing blank cells dropped.
 * @param {number} index
 * @param {TerminalScreen} screen
 * @returns {Row}
 */
function wholeRow(index, screen) {
  const cells = screen.lines[index].slice();
  while (cells.length > 0 && ScreenCell.equal(cells[cells.length - 1], ScreenCell.blank)) cells.pop();
  return ScreenUpdate.row(index, cells);
}

/**
 * Every row that is not blank: a whole state's rows.
 * @param {TerminalScreen} screen
 * @returns {{scroll: number, rows: Row[]}}
 */
export function wholeDiff(screen) {
  const rows = [];
  for (let index = 0; index < screen.lines.length; index++) {
    const row = wholeRow(index, screen);
    if (row.cells.length > 0) rows.push(row);
  }
  return { scroll: 0, rows };
}

/** @param {readonly ScreenCell[]} row */
function rowKey(row) {
  return row.map((cell) => JSON.stringify(cell)).join('\u0000');
}

/**
 * The upward move that leaves the most rows in place, 0 unless it saves more rows than it costs.
 * @param {TerminalScreen} old
 * @param {TerminalScreen} now
 */
function bestScroll(old, now) {
  const rows = now.lines.length;
  if (rows <= 1) return 0;
  /** @type {Map<string, number[]>} */
  const positions = new Map();
  for (let index = 1; index < rows; index++) {
    const key = rowKey(old.lines[index]);
    positions.set(key, [...(positions.get(key) ?? []), index]);
  }
  /** @type {Map<number, number>} */
  const votes = new Map();
  let inPlace = 0;
  for (let index = 0; index < rows; index++) {
    if (ScreenCell.rowsEqual(old.lines[index], now.lines[index])) inPlace += 1;
    const matches = positions.get(rowKey(now.lines[index]));
    if (matches === undefined || matches.length > 2) continue;
    for (const source of matches) if (source > index) votes.set(source - index, (votes.get(source - index) ?? 0) + 1);
  }
  let best = 0;
  let bestCount = -1;
  for (const [distance, count] of votes) {
    if (count > bestCount || (count === bestCount && distance < best)) {
      best = distance;
      bestCount = count;
    }
  }
  return bestCount > inPlace ? best : 0;
}

/**
 * Row `index` as the cells that differ between `old` and `now` (both a full row), a part for
 * each group of changes; the last clears the rest of the row when the new row ends in blanks
 * there. A part never splits a wide character from its right half.
 * @param {number} index
 * @param {readonly ScreenCell[]} old
 * @param {readonly ScreenCell[]} now
 * @returns {Row[]}
 */
export function rowChanges(index, old, now) {
  const width = Math.min(old.length, now.length);
  /** @type {[number, number][]} */
  const spans = [];
  let column = 0;
  while (column < width) {
    if (ScreenCell.equal(old[column], now[column])) {
      column += 1;
      continue;
    }
    let start = column;
    if (start > 0 && (old[start].width === 0 || now[start].width === 0)) start -= 1;
    let end = column + 1;
    if (end < width && (old[end - 1].width === 2 || now[end - 1].width === 2)) end += 1;
    const last = spans[spans.length - 1];
    if (last !== undefined && start - last[1] < GAP_WORTH_SKIPPING) {
      spans[spans.length - 1] = [last[0], Math.max(end, last[1])];
    } else {
      spans.push([start, end]);
    }
    column = end;
  }
  let content = now.length;
  while (content > 0 && ScreenCell.equal(now[content - 1], ScreenCell.blank)) content -= 1;
  return spans.map(([lower, upper], offset) => {
    if (offset === spans.length - 1 && upper >= content) {
      const start = Math.min(lower, content);
      return ScreenUpdate.row(index, now.slice(start, content), start);
    }
    return ScreenUpdate.row(index, now.slice(lower, upper), lower, true);
  });
}

/**
 * The change from `old` to `now`; the whole screen when their sizes differ.
 * @param {TerminalScreen} old
 * @param {TerminalScreen} now
 * @returns {{scroll: number, rows: Row[]}}
 */
export function diffBetween(old, now) {
  if (TerminalScreen.rows(old) !== TerminalScreen.rows(now) || TerminalScreen.columns(old) !== TerminalScreen.columns(now)) {
    return wholeDiff(now);
  }
  const scroll = bestScroll(old, now);
  /** @type {Row[]} */
  const changed = [];
  for (let index = 0; index < now.lines.length; index++) {
    const source = index + scroll;
    const before = source < old.lines.length ? old.lines[source] : null;
    if (before !== null && ScreenCell.rowsEqual(before, now.lines[index])) continue;
    const row = wholeRow(index, now);
    if (before === null) {
      if (row.cells.length > 0) changed.push(row);
      continue;
    }
    const parts = rowChanges(index, before, now.lines[index]);
    /** @param {Row[]} rows */
    const length = (rows) => rows.reduce((sum, part) => sum + encodedLength(part), 0);
    changed.push(...(length(parts) < length([row]) ? parts : [row]));
  }
  return { scroll, rows: changed };
}

/**
 * A screen state cut into `screen` messages that each fit one frame: the header in every part,
 * the title and the scroll in the first only, as many whole row entries in each as fit.
 * @param {{stream: number, state: bigint, base: bigint, inputBytes: bigint, screen: TerminalScreen, bells: number,
 *   title: string | null, diff: {scroll: number, rows: Row[]}, maximumLength?: number}} fields
 * @returns {SessionMessageValue[]}
 */
export function partsOf(fields) {
  const { screen, diff } = fields;
  const maximumLength = fields.maximumLength ?? SessionLimits.maximumLength;
  const rows = TerminalScreen.rows(screen);
  const columns = TerminalScreen.columns(screen);
  const cursor = {
    row: Math.min(Math.max(0, screen.cursor.row), rows - 1),
    column: Math.min(Math.max(0, screen.cursor.column), columns - 1),
    visible: screen.cursor.visible,
  };
  /** @param {Row[]} entries @param {boolean} first @param {boolean} last @returns {SessionMessageValue} */
  const part = (entries, first, last) => ({
    type: 'screen',
    update: {
      stream: fields.stream, state: fields.state, base: fields.base, inputBytes: fields.inputBytes, isLastPart: last,
      columns, rows, cursor, modes: { ...screen.modes }, bells: fields.bells, scroll: first ? diff.scroll : 0,
      title: first ? fields.title : null, lines: entries,
    },
  });
  /** @type {SessionMessageValue[]} */
  const parts = [];
  /** @type {Row[]} */
  let entries = [];
  let length = ScreenUpdate.headerLength + utf8Prefix(fields.title ?? '', SessionLimits.maximumText).length;
  for (const row of diff.rows) {
    const size = encodedLength(row);
    if (entries.length > 0 && length + size > maximumLength) {
      parts.push(part(entries, parts.length === 0, false));
      entries = [];
      length = ScreenUpdate.headerLength;
    }
    entries.push(row);
    length += size;
  }
  parts.push(part(entries, parts.length === 0, true));
  return parts;
}

/** @param {TerminalScreen} screen @returns {TerminalScreen} a copy whose rows can change without changing `screen` */
export function copyScreen(screen) {
  return TerminalScreen.make(screen.lines.map((line) => line.slice()), screen.cursor, screen.modes, screen.title);
}

/**
 * The states of one screen session as the computer numbers them: each the change from the one
 * sent before on this connection, the first of a connection whole.
 */
export class ScreenStatesForTests {
  /** @param {number} stream */
  constructor(stream) {
    this.stream = stream;
    this.lastState = 0n;
    /** @type {{screen: TerminalScreen, bells: number, inputBytes: bigint} | null} */
    this.sent = null;
  }

  /**
   * The messages of the next state, or none when nothing changed.
   * @param {TerminalScreen} screen
   * @param {number} bells
   * @param {bigint} [inputBytes]
   * @returns {SessionMessageValue[]}
   */
  messages(screen, bells, inputBytes = 0n) {
    const sent = this.sent;
    let diff;
    let base;
    let title;
    if (sent !== null) {
      if (TerminalScreen.equal(sent.screen, screen) && sent.bells === bells && sent.inputBytes === inputBytes) return [];
      diff = diffBetween(sent.screen, screen);
      base = this.lastState;
      title = sent.screen.title === screen.title ? null : screen.title;
    } else {
      diff = wholeDiff(screen);
      base = 0n;
      title = screen.title;
    }
    this.lastState += 1n;
    this.sent = { screen: copyScreen(screen), bells, inputBytes };
    return partsOf({ stream: this.stream, state: this.lastState, base, inputBytes, screen, bells, title, diff });
  }

  /** A new connection: the next state goes whole. */
  restart() {
    this.sent = null;
  }
}

/**
 * The messages as bytes and back (as the channel would carry them), into `apply`: the outcome of the last.
 * @template T
 * @param {SessionMessageValue[]} messages
 * @param {(update: import('../js/screen-update.js').ScreenUpdate) => T} apply
 * @returns {T | undefined}
 */
export function deliver(messages, apply) {
  let outcome;
  for (const message of messages) {
    const bytes = SessionMessage.encode(message);
    if (bytes.length > SessionLimits.maximumLength) throw new Error(`a screen message of ${bytes.length} bytes`);
    const parsed = SessionMessage.parse(bytes);
    if (parsed.type !== 'screen') throw new Error(`not a screen message: ${parsed.type}`);
    outcome = apply(parsed.update);
  }
  return outcome;
}
