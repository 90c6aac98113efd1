// The small JSON vocabulary of the channel's control messages and agents messages, strict about
// types, as the Swift side reads them (RelayJSON, over Foundation's JSONSerialization): the text
// must be UTF-8 and JSON; a value is an integer only when it is a JSON number without a fraction
// and of magnitude under 10^15 (never a boolean), a boolean only when it is `true` or `false`,
// bytes only as standard, padded base64. Texts are written with only `"`, `\` and control
// characters escaped, as the Swift side writes them. The twin of RelayJSON.

import { fromBase64Url, toBase64Url } from './bytes.js';

const strictUTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The largest magnitude an integer may have (RelayJSON.integer's bound). */
const INTEGER_BOUND = 1e15;

/**
 * The value of a JSON text in `bytes`, or `undefined` when the bytes are not UTF-8 or not JSON
 * (a byte order mark included).
 * @param {Uint8Array} bytes
 * @returns {unknown}
 */
function parse(bytes) {
  let text;
  try {
    text = strictUTF8.decode(bytes);
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A JSON object (not an array, not null).
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const hasOwn = Object.prototype.hasOwnProperty;

export const RelayJSON = Object.freeze({
  integerBound: INTEGER_BOUND,
  parse,
  isObject,

  /**
   * The JSON object in `bytes`, or null for anything else (arrays, scalars, bad JSON).
   * @param {Uint8Array} bytes
   * @returns {Record<string, unknown> | null}
   */
  object(bytes) {
    const value = parse(bytes);
    return isObject(value) ? value : null;
  },

  /**
   * Whether `object` has the field `key` (of any value, `null` included).
   * @param {Record<string, unknown>} object
   * @param {string} key
   */
  has(object, key) {
    return hasOwn.call(object, key);
  },

  /**
   * An integer that is not a boolean, of magnitude under 10^15; null otherwise.
   * @param {unknown} value
   * @returns {number | null}
   */
  integer(value) {
    if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) >= INTEGER_BOUND) return null;
    return value === 0 ? 0 : value; // -0 is 0
  },

  /**
   * A JSON `true` or `false`, not a number; null otherwise.
   * @param {unknown} value
   * @returns {boolean | null}
   */
  boolean(value) {
    return typeof value === 'boolean' ? value : null;
  },

  /**
   * Standard base64 (RFC 4648 section 4, padded) decoded; null for anything else. The last
   * character's spare bits must be zero (one text for each byte string).
   * @param {unknown} value
   * @returns {Uint8Array | null}
   */
  bytes(value) {
    if (typeof value !== 'string' || value.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return null;
    try {
      return fromBase64Url(value.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
    } catch {
      return null;
    }
  },

  /**
   * `bytes` as standard, padded base64.
   * @param {Uint8Array} bytes
   * @returns {string}
   */
  base64(bytes) {
    const text = toBase64Url(bytes).replace(/-/g, '+').replace(/_/g, '/');
    return text + '='.repeat((4 - (text.length % 4)) % 4);
  },

  /**
   * `text` as a JSON string literal: `"` and `\` escaped, line feed, carriage return and tab
   * as `\n`, `\r`, `\t`, other control characters below U+0020 as `\u00xx`; everything else as it is.
   * @param {string} text
   * @returns {string}
   */
  quoted(text) {
    let out = '"';
    for (const character of text) {
      const point = /** @type {number} */ (character.codePointAt(0));
      if (character === '"') out += '\\"';
      else if (character === '\\') out += '\\\\';
      else if (character === '\n') out += '\\n';
      else if (character === '\r') out += '\\r';
      else if (character === '\t') out += '\\t';
      else if (point < 0x20) out += '\\u' + point.toString(16).padStart(4, '0');
      else out += character;
    }
    return out + '"';
  },
});
