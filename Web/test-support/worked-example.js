// docs/companion.md's worked example as data, read from the document itself: for each part (the
// pairing, the session, the screen session), each side's admission frames, the three handshake
// messages, every application message with its direction and the frame that carries it, and the
// `/register` body.

import { readFileSync } from 'node:fs';
import { fromHex, utf8 } from '../js/bytes.js';

/**
 * @typedef {object} DocumentedPart
 * @property {Record<'mac' | 'phone', string[]>} admissions each side's admission frames, `→` and `←` alike, in order
 * @property {Uint8Array[]} handshake the three handshake messages
 * @property {{direction: 'computer → device' | 'device → computer', message: Uint8Array, frame: Uint8Array | null, line: string}[]} messages
 * @property {string | null} register the `/register` body
 */

/** @returns {string} the worked example's text */
function text() {
  const all = readFileSync(new URL('../../docs/companion.md', import.meta.url), 'utf8');
  const start = all.indexOf('<!-- worked example');
  const end = all.indexOf('<!-- end of the worked example -->');
  if (start < 0 || end < start) throw new Error('docs/companion.md has no worked example');
  return all.slice(start, end);
}

/**
 * The code block after line `index`: its lines.
 * @param {string[]} lines
 * @param {number} index
 */
function blockAfter(lines, index) {
  let open = index + 1;
  while (open < lines.length && lines[open] !== '```') {
    if (lines[open].startsWith('- ')) return [];
    open += 1;
  }
  const close = lines.indexOf('```', open + 1);
  return open < lines.length && close > open ? lines.slice(open + 1, close) : [];
}

/**
 * @param {string} section
 * @returns {DocumentedPart}
 */
function part(section) {
  const lines = section.split('\n');
  /** @type {DocumentedPart} */
  const result = { admissions: { mac: [], phone: [] }, handshake: [], messages: [], register: null };
  lines.forEach((line, index) => {
    const admission = /^- The (computer|device) \(`(mac|phone)`\) opens/.exec(line);
    if (admission !== null) {
      result.admissions[/** @type {'mac' | 'phone'} */ (admission[2])] = blockAfter(lines, index).map((entry) => entry.slice(2));
      return;
    }
    if (line.startsWith('- The Noise handshake')) {
      let current = '';
      for (const entry of blockAfter(lines, index)) {
        if (/^[→←] message/.test(entry)) {
          if (current !== '') result.handshake.push(fromHex(current));
          current = '';
        } else {
          current += entry;
        }
      }
      if (current !== '') result.handshake.push(fromHex(current));
      return;
    }
    if (line.startsWith('- The device calls `POST /register`')) {
      result.register = blockAfter(lines, index).join('');
      return;
    }
    const arrow = /^- (computer → device|device → computer), /.exec(line);
    if (arrow === null) return;
    const quoted = Array.from(line.matchAll(/`([^`]*)`/g), (match) => match[1]);
    const json = quoted.find((entry) => entry.startsWith('{'));
    const hex = quoted.filter((entry) => /^[0-9a-f]{2}( ?[0-9a-f]{2})*$/.test(entry) && entry.includes(' ')).pop();
    const message = json !== undefined ? utf8(json) : fromHex(/** @type {string} */ (hex).replace(/ /g, ''));
    const block = blockAfter(lines, index);
    result.messages.push({
      direction: /** @type {'computer → device' | 'device → computer'} */ (arrow[1]), message,
      frame: block.length > 0 ? fromHex(block.join('')) : null, line,
    });
  });
  return result;
}

/** The three parts of the worked example. */
export function workedExample() {
  const all = text();
  const pairing = all.indexOf('### One pairing');
  const session = all.indexOf('### One session');
  const screen = all.indexOf('### One screen session');
  return {
    pairing: part(all.slice(pairing, session)),
    session: part(all.slice(session, screen)),
    screen: part(all.slice(screen)),
  };
}
