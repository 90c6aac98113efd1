// Byte helpers shared by the web client's modules: hex, unpadded base64url, UTF-8, joining
// arrays, and a comparison whose time does not depend on where two arrays differ.

const HEX_DIGITS = '0123456789abcdef';
const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Lowercase hex of `bytes`.
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function toHex(bytes) {
  let text = '';
  for (let i = 0; i < bytes.length; i++) {
    text += HEX_DIGITS[bytes[i] >>> 4] + HEX_DIGITS[bytes[i] & 15];
  }
  return text;
}

/**
 * The bytes of a hex string: an even number of digits, either case, nothing else (no spaces,
 * no `0x`). Throws a `SyntaxError` for anything else.
 * @param {string} text
 * @returns {Uint8Array}
 */
export function fromHex(text) {
  if (text.length % 2 !== 0) {
    throw new SyntaxError(`hex: odd number of digits (${text.length})`);
  }
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) {
    const high = hexDigitValue(text.charCodeAt(2 * i));
    const low = hexDigitValue(text.charCodeAt(2 * i + 1));
    if (high < 0 || low < 0) {
      throw new SyntaxError(`hex: not a hex digit at offset ${high < 0 ? 2 * i : 2 * i + 1}`);
    }
    bytes[i] = (high << 4) | low;
  }
  return bytes;
}

/**
 * @param {number} code a UTF-16 code unit
 * @returns {number} 0–15, or -1 for a character that is not a hex digit
 */
function hexDigitValue(code) {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 97 && code <= 102) return code - 87; // a-f
  if (code >= 65 && code <= 70) return code - 55; // A-F
  return -1;
}

/**
 * Unpadded base64url (RFC 4648 section 5) of `bytes`.
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function toBase64Url(bytes) {
  let text = '';
  let i = 0;
  for (; i + 3 <= bytes.length; i += 3) {
    const group = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    text += BASE64URL_ALPHABET[group >>> 18] + BASE64URL_ALPHABET[(group >>> 12) & 63] +
      BASE64URL_ALPHABET[(group >>> 6) & 63] + BASE64URL_ALPHABET[group & 63];
  }
  const left = bytes.length - i;
  if (left === 1) {
    const group = bytes[i] << 16;
    text += BASE64URL_ALPHABET[group >>> 18] + BASE64URL_ALPHABET[(group >>> 12) & 63];
  } else if (left === 2) {
    const group = (bytes[i] << 16) | (bytes[i + 1] << 8);
    text += BASE64URL_ALPHABET[group >>> 18] + BASE64URL_ALPHABET[(group >>> 12) & 63] +
      BASE64URL_ALPHABET[(group >>> 6) & 63];
  }
  return text;
}

/**
 * The bytes of unpadded, canonical base64url (RFC 4648 sections 3.5 and 5): only the URL-safe
 * alphabet, no `=`, no whitespace, a length that is not 1 more than a multiple of 4, and zero
 * bits where the last character has bits to spare. So each byte string has exactly one text
 * (a 32-byte key is always 43 characters). Throws a `SyntaxError` for anything else.
 * @param {string} text
 * @returns {Uint8Array}
 */
export function fromBase64Url(text) {
  if (text.length % 4 === 1) {
    throw new SyntaxError(`base64url: a length of ${text.length} cannot be unpadded base64`);
  }
  const bytes = new Uint8Array(Math.floor((text.length * 3) / 4));
  let group = 0;
  let bits = 0;
  let out = 0;
  for (let i = 0; i < text.length; i++) {
    const value = base64UrlDigitValue(text.charCodeAt(i));
    if (value < 0) {
      throw new SyntaxError(`base64url: not a base64url character at offset ${i}`);
    }
    group = ((group << 6) | value) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[out++] = (group >>> bits) & 0xff;
    }
  }
  if ((group & ((1 << bits) - 1)) !== 0) {
    throw new SyntaxError('base64url: not canonical (the last character has bits set past the end)');
  }
  return bytes;
}

/**
 * @param {number} code a UTF-16 code unit
 * @returns {number} 0–63, or -1 for a character outside the base64url alphabet
 */
function base64UrlDigitValue(code) {
  if (code >= 65 && code <= 90) return code - 65; // A-Z
  if (code >= 97 && code <= 122) return code - 71; // a-z
  if (code >= 48 && code <= 57) return code + 4; // 0-9
  if (code === 45) return 62; // -
  if (code === 95) return 63; // _
  return -1;
}

const utf8Encoder = new TextEncoder();

/**
 * The UTF-8 bytes of `text` (lone surrogates become U+FFFD, as `TextEncoder` does).
 * @param {string} text
 * @returns {Uint8Array}
 */
export function utf8(text) {
  return utf8Encoder.encode(text);
}

/**
 * The arrays one after another in a new array.
 * @param {...Uint8Array} parts
 * @returns {Uint8Array}
 */
export function concatBytes(...parts) {
  let length = 0;
  for (const part of parts) length += part.length;
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

/**
 * Whether `a` and `b` hold the same bytes. For equal lengths the time taken depends only on
 * the length, not on the contents (no early exit); the lengths themselves are not secret.
 * @param {Uint8Array} a
 * @param {Uint8Array} b
 * @returns {boolean}
 */
export function constantTimeEqual(a, b) {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}
