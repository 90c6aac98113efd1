// One `scrollback` message (0x14, docs/companion.md, "Scrollback"): lines that scrolled off the
// top of the screen, numbered from 0 for the session, oldest first, each its cells from the left
// (trailing blanks dropped), each written as a row's runs alone (no index, no column). The twin
// of ScrollbackLines.

import { SessionLimits, SessionMessageError } from './session-wire.js';
import { ScreenCellCoding } from './screen-cell-coding.js';

/** @typedef {import('./session-wire.js').Writer} Writer */
/** @typedef {import('./session-wire.js').Reader} Reader */
/** @typedef {import('./screen-cell.js').ScreenCell} ScreenCell */

/**
 * @typedef {object} ScrollbackLines
 * @property {number} stream
 * @property {bigint} first the number of the first line here
 * @property {bigint} oldest the oldest line the computer still keeps (older ones are gone for good)
 * @property {bigint} total the lines that ever scrolled off: the next line's number
 * @property {ScreenCell[][]} lines
 */

/** The most lines one request may ask for, and one answer hold ("count (u16, 1–1000)"). */
const MAXIMUM_REQUEST = 1000;

/**
 * The fields after the type and the stream.
 * @param {ScrollbackLines} scrollback
 * @param {Writer} out
 */
function write(scrollback, out) {
  out.u64(scrollback.first);
  out.u64(scrollback.oldest);
  out.u64(scrollback.total);
  out.u16(scrollback.lines.length);
  for (const line of scrollback.lines) ScreenCellCoding.write(line, out);
}

/**
 * Reads the fields after the type and the stream: the lines must lie within what the computer
 * says it keeps (`oldest ≤ first`, `first + count ≤ total`), at most 1000 of them, each at most
 * 1000 cells.
 * @param {number} stream
 * @param {Reader} reader
 * @returns {ScrollbackLines}
 */
function read(stream, reader) {
  const first = reader.u64();
  const oldest = reader.u64();
  const total = reader.u64();
  const count = reader.u16();
  if (!(oldest <= total && count <= MAXIMUM_REQUEST && first >= oldest && first <= total &&
    BigInt(count) <= total - first)) {
    const end = (first + BigInt(count)) & 0xffffffffffffffffn;
    throw new SessionMessageError('scrollbackLines', `scrollback lines ${first}..<${end} of ${oldest}..<${total}`);
  }
  /** @type {ScreenCell[][]} */
  const lines = [];
  for (let line = 0; line < count; line++) lines.push(ScreenCellCoding.read(reader, SessionLimits.maximumCells));
  return { stream, first, oldest, total, lines };
}

export const ScrollbackLines = Object.freeze({
  maximumRequest: MAXIMUM_REQUEST,
  write,
  read,
});
