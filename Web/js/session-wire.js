// The session protocol's wire (docs/companion.md, "The session protocol"): its limits, the
// big-endian fields every message is made of, written and read in place, and the error a
// message that does not parse throws. The twins of SessionMessage's static limits,
// SessionMessage.Writer, SessionMessage.Reader, SessionMessage.utf8 and SessionMessageError;
// session-message.js, screen-update.js, screen-cell-coding.js and scrollback-lines.js build on
// it (a module of its own so that they do not import one another in a circle).

import { utf8 } from './bytes.js';
import { NoiseLimits } from './noise-error.js';

/** The chunk flag byte before each chunk's plaintext (interop-facts §5). */
const CHUNK_FLAG_LENGTH = 1;

/** The session protocol's bounds (docs/companion.md, "The session protocol"). */
export const SessionLimits = Object.freeze({
  /** The protocol's version, the byte after the type of `open`, `resume`, `open agent`, `open screen`, `resume screen`. */
  version: 1,
  /** One Noise frame's worth of application bytes: 65535 − 16 (tag) − 1 (chunk flag) = 65518. */
  maximumLength: NoiseLimits.maximumMessageLength - NoiseLimits.tagLength - CHUNK_FLAG_LENGTH,
  /** The largest output chunk: the longest message less output's 13-byte header (65505). */
  maximumData: NoiseLimits.maximumMessageLength - NoiseLimits.tagLength - CHUNK_FLAG_LENGTH - 13,
  /** A resume token. */
  tokenSize: 16,
  /** "cols and rows 1–1000". */
  maximumCells: 1000,
  /** "window 4 KiB–64 MiB". */
  minimumWindow: 4 * 1024,
  maximumWindow: 64 * 1024 * 1024,
  /** A refusal's text and a screen's title: "≤ 1024" bytes. */
  maximumText: 1024,
  /** `exit`'s signal name: "≤ 32" bytes. */
  maximumSignalName: 32,
  /** A text after a one-byte length (names, pane ids). */
  maximumShortText: 255,
});

/**
 * A stable kind, meant for code (the message says what came, for people):
 * - `tooLong`: a message over `SessionLimits.maximumLength`.
 * - `unknownType`: a type byte that is no session message.
 * - `version`: a version byte other than 1.
 * - `cutShort`: the message ends inside a field.
 * - `trailingBytes`: bytes after the last field.
 * - `notUTF8`: a text field that is not UTF-8.
 * - `cells`: cols or rows outside 1–1000 (`open`, `resume`, `resize`, `open screen`, `resume screen`).
 * - `window`: a flow-control window outside 4 KiB–64 MiB.
 * - `name`: a session name that breaks herdr's rule.
 * - `agent`: an agent's session name or pane id that breaks its rule.
 * - `exitStatusFlag`: `exit`'s status flag neither 0 nor 1.
 * - `signalName`: a signal name over 32 bytes.
 * - `refusalText`: a refusal's text over 1024 bytes.
 * - `screenTarget`: `open screen`'s target neither 0 nor 1.
 * - `screenAck`: an acknowledgement of state 0.
 * - `scrollbackRequest`: a request for 0 or more than 1000 lines.
 * - `screenState`: a state 0, or a base not before its state.
 * - `screenFlags`, `screenModes`, `mouse`, `attributes`, `underline`, `colour`: unknown bits or values.
 * - `screenSize`: a screen's columns or rows outside 1–1000.
 * - `cursor`: the cursor outside the screen.
 * - `scroll`: a scroll of every row, or a scroll in a whole state.
 * - `title`: a title over 1024 bytes; `titleFlag`: title bytes without the title flag.
 * - `rowCount`: more row entries than one message can hold.
 * - `row`: a row entry outside the screen; `rowOrder`: entries out of order or overlapping.
 * - `runStyle`: two runs of one style side by side; `runLength`: an empty run, or more cells
 *   than the row holds; `textRun`: a text run whose text is over 4 bytes a cell, or not one
 *   code point a cell; `runEncoding`: a run of cells that could be a text run sent cell by cell.
 * - `cell`: a cell of width 3, or with more than 32 bytes of text.
 * - `scrollbackLines`: scrollback lines outside what the computer says it keeps.
 * - `unencodable`: the encoder was given a value its field cannot hold (a programming error,
 *   never the peer's).
 * @typedef {'tooLong' | 'unknownType' | 'version' | 'cutShort' | 'trailingBytes' | 'notUTF8' | 'cells'
 *   | 'window' | 'name' | 'agent' | 'exitStatusFlag' | 'signalName' | 'refusalText' | 'screenTarget'
 *   | 'screenAck' | 'scrollbackRequest' | 'screenState' | 'screenFlags' | 'screenSize' | 'cursor'
 *   | 'screenModes' | 'mouse' | 'scroll' | 'title' | 'titleFlag' | 'rowCount' | 'row' | 'rowOrder'
 *   | 'runStyle' | 'runLength' | 'textRun' | 'runEncoding' | 'cell' | 'attributes' | 'underline' | 'colour'
 *   | 'scrollbackLines' | 'unencodable'} SessionMessageErrorKind
 */

/** A session message that does not parse: the peer is broken or hostile; the channel ends. */
export class SessionMessageError extends Error {
  /**
   * @param {SessionMessageErrorKind} kind
   * @param {string} message what came, to follow "sent" ("a session message cut short")
   */
  constructor(kind, message) {
    super(message);
    this.name = 'SessionMessageError';
    /** @readonly @type {SessionMessageErrorKind} */
    this.kind = kind;
  }
}

const strictUTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * `text` as UTF-8, cut to at most `limit` bytes at a code point's boundary (what the Swift
 * side's `SessionMessage.utf8(_:limit:)` does). A lone surrogate is written as U+FFFD, as
 * `TextEncoder` writes it.
 * @param {string} text
 * @param {number} limit
 * @returns {Uint8Array}
 */
export function utf8Prefix(text, limit) {
  if (text.length > 64) return utf8PrefixOfLongText(text, limit);
  // Short texts (every cell's) are written here, without a TextEncoder call each.
  const out = new Uint8Array(Math.min(limit, text.length * 3));
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    let point = text.charCodeAt(i);
    let units = 1;
    if (point >= 0xd800 && point <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (point <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        point = 0x10000 + ((point - 0xd800) << 10) + (next - 0xdc00);
        units = 2;
      } else {
        point = 0xfffd;
      }
    }
    const size = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
    if (used + size > limit) break;
    if (size === 1) {
      out[used] = point;
    } else if (size === 2) {
      out[used] = 0xc0 | (point >> 6);
      out[used + 1] = 0x80 | (point & 0x3f);
    } else if (size === 3) {
      out[used] = 0xe0 | (point >> 12);
      out[used + 1] = 0x80 | ((point >> 6) & 0x3f);
      out[used + 2] = 0x80 | (point & 0x3f);
    } else {
      out[used] = 0xf0 | (point >> 18);
      out[used + 1] = 0x80 | ((point >> 12) & 0x3f);
      out[used + 2] = 0x80 | ((point >> 6) & 0x3f);
      out[used + 3] = 0x80 | (point & 0x3f);
    }
    used += size;
    i += units - 1;
  }
  return used === out.length ? out : out.slice(0, used);
}

/**
 * `utf8Prefix` for a longer text: the code points that fit, then one `TextEncoder` call.
 * @param {string} text
 * @param {number} limit
 * @returns {Uint8Array}
 */
function utf8PrefixOfLongText(text, limit) {
  let used = 0;
  let end = 0;
  for (const character of text) {
    const point = /** @type {number} */ (character.codePointAt(0));
    const size = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
    if (used + size > limit) break;
    used += size;
    end += character.length;
  }
  return utf8(end === text.length ? text : text.slice(0, end));
}

/**
 * The text of `bytes` when they are well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF, nothing cut), else null. For short texts (a cell's), where
 * a `TextDecoder` call each would cost more than the decoding.
 * @param {Uint8Array} bytes
 * @param {number} start
 * @param {number} end
 * @returns {string | null}
 */
function decodeShortUTF8(bytes, start, end) {
  let text = '';
  let i = start;
  while (i < end) {
    const lead = bytes[i];
    if (lead < 0x80) {
      text += String.fromCharCode(lead);
      i += 1;
      continue;
    }
    let size;
    let point;
    let minimum;
    if (lead >= 0xc2 && lead <= 0xdf) {
      size = 2;
      point = lead & 0x1f;
      minimum = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      size = 3;
      point = lead & 0x0f;
      minimum = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      size = 4;
      point = lead & 0x07;
      minimum = 0x10000;
    } else {
      return null;
    }
    if (i + size > end) return null;
    for (let k = 1; k < size; k++) {
      const continuation = bytes[i + k];
      if ((continuation & 0xc0) !== 0x80) return null;
      point = (point << 6) | (continuation & 0x3f);
    }
    if (point < minimum || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return null;
    text += String.fromCodePoint(point);
    i += size;
  }
  return text;
}

/**
 * Throws `unencodable` unless `value` is an integer from 0 to `maximum`.
 * @param {number} value
 * @param {number} maximum
 * @param {string} what
 */
function checkUnsigned(value, maximum, what) {
  if (!Number.isInteger(value) || value < 0 || value > maximum) {
    throw new SessionMessageError('unencodable', `${what} ${value} does not fit (0 to ${maximum})`);
  }
}

/** Big-endian fields appended in place (SessionMessage.Writer). */
export class Writer {
  /** @param {number} [capacity] bytes to reserve */
  constructor(capacity = 64) {
    /** @private */
    this.buffer = new Uint8Array(Math.max(16, capacity));
    /** The bytes written so far. */
    this.length = 0;
  }

  /**
   * Makes room for `count` more bytes.
   * @private
   * @param {number} count
   */
  reserve(count) {
    if (this.length + count <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + count) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }

  /** @param {number} value */
  u8(value) {
    checkUnsigned(value, 0xff, 'a byte');
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  /** @param {number} value */
  u16(value) {
    checkUnsigned(value, 0xffff, 'a u16');
    this.reserve(2);
    this.buffer[this.length++] = value >>> 8;
    this.buffer[this.length++] = value & 0xff;
  }

  /** @param {number} value */
  u32(value) {
    checkUnsigned(value, 0xffffffff, 'a u32');
    this.reserve(4);
    this.buffer[this.length++] = value >>> 24;
    this.buffer[this.length++] = (value >>> 16) & 0xff;
    this.buffer[this.length++] = (value >>> 8) & 0xff;
    this.buffer[this.length++] = value & 0xff;
  }

  /** @param {bigint} value */
  u64(value) {
    if (typeof value !== 'bigint' || value < 0n || value > 0xffffffffffffffffn) {
      throw new SessionMessageError('unencodable', `a u64 ${value} does not fit (a bigint from 0 to 2^64 − 1)`);
    }
    this.u32(Number(value >> 32n));
    this.u32(Number(value & 0xffffffffn));
  }

  /** @param {Uint8Array} bytes */
  bytes(bytes) {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  /**
   * A length byte and the text's UTF-8, cut to 255 bytes (names and pane ids).
   * @param {string} text
   */
  shortText(text) {
    const bytes = utf8Prefix(text, SessionLimits.maximumShortText);
    this.u8(bytes.length);
    this.bytes(bytes);
  }

  /**
   * The type byte, the version when the message carries one, and the stream.
   * @param {number} type
   * @param {number} stream
   * @param {boolean} [version]
   */
  kind(type, stream, version = false) {
    this.u8(type);
    if (version) this.u8(SessionLimits.version);
    this.u32(stream);
  }

  /** @returns {Uint8Array} the bytes written, in an array of their own */
  finish() {
    return this.buffer.slice(0, this.length);
  }
}

/** Big-endian fields read in place, each checked against the bytes left (SessionMessage.Reader). */
export class Reader {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    /** @readonly */
    this.bytes = bytes;
    this.index = 0;
  }

  get remaining() {
    return this.bytes.length - this.index;
  }

  get atEnd() {
    return this.index === this.bytes.length;
  }

  /**
   * @private
   * @param {number} count
   */
  need(count) {
    if (count > this.remaining) throw new SessionMessageError('cutShort', 'a session message cut short');
  }

  /**
   * The next `count` bytes, in an array of their own.
   * @param {number} count
   * @returns {Uint8Array}
   */
  take(count) {
    this.need(count);
    const taken = this.bytes.slice(this.index, this.index + count);
    this.index += count;
    return taken;
  }

  /** @returns {number} */
  u8() {
    this.need(1);
    return this.bytes[this.index++];
  }

  /** @returns {number} */
  u16() {
    this.need(2);
    const value = (this.bytes[this.index] << 8) | this.bytes[this.index + 1];
    this.index += 2;
    return value;
  }

  /** @returns {number} */
  u32() {
    this.need(4);
    const b = this.bytes;
    const i = this.index;
    this.index += 4;
    return ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;
  }

  /** @returns {bigint} */
  u64() {
    this.need(8);
    const high = this.u32();
    const low = this.u32();
    return (BigInt(high) << 32n) | BigInt(low);
  }

  /**
   * `length` bytes of UTF-8 text; throws `notUTF8` for anything that is not (overlong forms,
   * surrogates, cut sequences). A byte order mark is kept, as the text's first character.
   * @param {number} length
   * @returns {string}
   */
  text(length) {
    this.need(length);
    const start = this.index;
    this.index += length;
    if (length <= 64) {
      const text = decodeShortUTF8(this.bytes, start, start + length);
      if (text === null) throw new SessionMessageError('notUTF8', 'text that is not UTF-8');
      return text;
    }
    try {
      return strictUTF8.decode(this.bytes.subarray(start, start + length));
    } catch {
      throw new SessionMessageError('notUTF8', 'text that is not UTF-8');
    }
  }

  /** @returns {Uint8Array} every byte left, in an array of their own */
  rest() {
    const rest = this.bytes.slice(this.index);
    this.index = this.bytes.length;
    return rest;
  }
}
