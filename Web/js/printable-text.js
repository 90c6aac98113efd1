// Text from a peer made safe to show and to carry: only printable code points (control, format,
// surrogate, private-use and unassigned ones dropped; space, line and paragraph separators made
// plain spaces), trimmed, bounded. The twin of PairingCodeRules.printableText and BoundedText.
// Categories come from this engine's Unicode tables (`\p{…}`), which may be a version apart
// from the Swift side's for code points assigned in between.

import { utf8 } from './bytes.js';

const DROPPED = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}]$/u;
const SEPARATOR = /^[\p{Zs}\p{Zl}\p{Zp}]$/u;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The extended grapheme clusters of `text`: its characters, as Swift's `String` counts them.
 * @param {string} text
 * @returns {string[]}
 */
export function characters(text) {
  return Array.from(graphemes.segment(text), (part) => part.segment);
}

/**
 * `raw` with only printable code points (separators made plain spaces), at most `limit` of them
 * (counted as code points), then trimmed of plain spaces standing as characters of their own.
 * @param {string} raw
 * @param {number} limit
 * @returns {string}
 */
export function printableText(raw, limit) {
  let kept = '';
  let count = 0;
  for (const point of raw) {
    if (count >= limit) break;
    if (DROPPED.test(point)) continue;
    kept += SEPARATOR.test(point) ? ' ' : point;
    count += 1;
  }
  if (!kept.startsWith(' ') && !kept.endsWith(' ')) return kept;
  const clusters = characters(kept);
  let start = 0;
  let end = clusters.length;
  while (start < end && clusters[start] === ' ') start += 1;
  while (end > start && clusters[end - 1] === ' ') end -= 1;
  return clusters.slice(start, end).join('');
}

export const BoundedText = Object.freeze({
  /**
   * `raw` made printable (tabs and line breaks made spaces first), cut at a character's
   * boundary to at most `maxBytes` bytes of UTF-8.
   * @param {string} raw
   * @param {number} maxBytes
   * @returns {string}
   */
  printable(raw, maxBytes) {
    const clean = printableText(raw.replace(/[\t\n\r]/g, ' '), maxBytes);
    if (utf8(clean).length <= maxBytes) return clean;
    let out = '';
    let used = 0;
    for (const character of characters(clean)) {
      const size = utf8(character).length;
      if (used + size > maxBytes) break;
      out += character;
      used += size;
    }
    return out;
  },

  /**
   * `raw` made printable and bounded, or null when nothing is left of it.
   * @param {string | null} raw
   * @param {number} maxBytes
   * @returns {string | null}
   */
  optional(raw, maxBytes) {
    if (raw === null) return null;
    const text = BoundedText.printable(raw, maxBytes);
    return text === '' ? null : text;
  },
});
