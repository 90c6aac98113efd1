// What both pairing codes share (interop-facts §3, docs/companion.md "The code"): a
// `herdr://<host>?k=v&…` link of at most 8192 UTF-8 bytes, values RFC 3986 percent-escaped; the
// scheme and host compare case-insensitively; no user, password, port, path or fragment; unknown
// keys are ignored (a later version may add some, and a `cmd` never matters); a known key twice
// is an error. Also the field rules both codes share (the computer name, the herdr session, the
// expiry) and the error every refusal throws. The twins of HerdrLink, PairingCodeRules and
// PairingCodeError.

import { utf8 } from './bytes.js';
import { characters } from './printable-text.js';
import { HerdrSessionName } from './herdr-session-name.js';

/**
 * A stable kind, meant for code:
 * - `tooLong`: over 8192 UTF-8 bytes.
 * - `notAPairingCode`: not a `herdr://` link (or, for the web client's address, no code after `#`).
 * - `malformed`: a space or control character, a fragment, a user, password, port or path, a
 *   broken %-escape, a value that is not UTF-8.
 * - `missingField`, `duplicateField`, `invalidField`: a field's rule (`field` names it).
 * - `unsupportedVersion`: a `v` or `proto` of another version.
 * - `expired`: the code's `x` has passed.
 * @typedef {'tooLong' | 'notAPairingCode' | 'malformed' | 'missingField' | 'duplicateField'
 *   | 'unsupportedVersion' | 'invalidField' | 'expired'} PairingCodeErrorKind
 */

/** Why a pairing code was refused, naming the query key at fault when one field is. */
export class PairingCodeError extends Error {
  /**
   * @param {PairingCodeErrorKind} kind
   * @param {string | null} field
   * @param {string} message words a person can act on
   */
  constructor(kind, field, message) {
    super(message);
    this.name = 'PairingCodeError';
    /** @readonly @type {PairingCodeErrorKind} */
    this.kind = kind;
    /** @readonly @type {string | null} */
    this.field = field;
  }
}

/** The longest code accepted, in UTF-8 bytes (both kinds). */
const MAXIMUM_CODE_LENGTH = 8192;
/** The longest computer name, in characters. */
const MAXIMUM_NAME_LENGTH = 64;
/** The longest a code may claim to be valid for, in seconds. */
const MAXIMUM_LIFETIME = 900;

const PERCENT = 0x25;
const AMPERSAND = 0x26;
const EQUALS = 0x3d;

const strictUTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * @param {number} byte
 * @returns {number} 0–15, or -1
 */
function hexValue(byte) {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x41 + 10;
  return -1;
}

/**
 * `%XX` decoded, every other byte taken as it is (`+` included); the result must be UTF-8.
 * @param {Uint8Array} bytes
 * @returns {string}
 */
function percentDecode(bytes) {
  const out = new Uint8Array(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== PERCENT) {
      out[length++] = bytes[i];
      continue;
    }
    const high = i + 1 < bytes.length ? hexValue(bytes[i + 1]) : -1;
    const low = i + 2 < bytes.length ? hexValue(bytes[i + 2]) : -1;
    if (high < 0 || low < 0) throw new PairingCodeError('malformed', null, 'The pairing code has a broken %-escape');
    out[length++] = (high << 4) | low;
    i += 2;
  }
  try {
    return strictUTF8.decode(out.subarray(0, length));
  } catch {
    throw new PairingCodeError('malformed', null, 'The pairing code is not valid UTF-8');
  }
}

/**
 * A value escaped as the writer escapes it: everything but `A-Z a-z 0-9 - . _ ~ , :`.
 * @param {string} value
 * @returns {string}
 */
function escape(value) {
  let out = '';
  for (const byte of utf8(value)) {
    const keep = (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) ||
      byte === 0x2d || byte === 0x2e || byte === 0x5f || byte === 0x7e || byte === 0x2c || byte === 0x3a;
    out += keep ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The fields as a query: `k=v&…`, values escaped, in order.
 * @param {[string, string][]} fields
 * @returns {string}
 */
function query(fields) {
  return fields.map(([key, value]) => `${key}=${escape(value)}`).join('&');
}

/**
 * The length and character checks every code's text gets first.
 * @param {Uint8Array} bytes the text's UTF-8
 */
function checkText(bytes) {
  if (bytes.length > MAXIMUM_CODE_LENGTH) {
    throw new PairingCodeError('tooLong', null, `The pairing code is longer than ${MAXIMUM_CODE_LENGTH} bytes`);
  }
  // RFC 3986 has no raw spaces or control characters; a value that needs one is %-escaped.
  if (bytes.some((byte) => byte <= 0x20 || byte === 0x7f)) {
    throw new PairingCodeError('malformed', null,
      'The pairing code contains a space or control character (values must be %-escaped)');
  }
}

/**
 * The known fields of a query (`k=v&…`, the bytes after `?` or `#`), decoded.
 * @param {Uint8Array} bytes
 * @param {ReadonlySet<string>} knownKeys
 * @returns {Map<string, string>}
 */
function queryFields(bytes, knownKeys) {
  /** @type {Map<string, string>} */
  const fields = new Map();
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(AMPERSAND, start);
    if (end < 0) end = bytes.length;
    const part = bytes.subarray(start, end);
    start = end + 1;
    if (part.length === 0) continue;
    const equals = part.indexOf(EQUALS);
    const key = percentDecode(equals < 0 ? part : part.subarray(0, equals));
    const value = percentDecode(equals < 0 ? new Uint8Array(0) : part.subarray(equals + 1));
    if (!knownKeys.has(key)) continue; // unknown keys (like `cmd`) never matter
    if (fields.has(key)) throw new PairingCodeError('duplicateField', key, `The pairing code has the field ${key} twice`);
    fields.set(key, value);
  }
  return fields;
}

export const HerdrLink = Object.freeze({
  maximumLength: MAXIMUM_CODE_LENGTH,
  escape,
  query,
  queryFields,
  checkText,

  /**
   * The link for `host` with `fields`, in order.
   * @param {string} host
   * @param {[string, string][]} fields
   * @returns {string}
   */
  url(host, fields) {
    return `herdr://${host}?${query(fields)}`;
  },

  /**
   * The host of a `herdr://` link (lowercased), or null when `text` is not one.
   * @param {string} text
   * @returns {string | null}
   */
  host(text) {
    const lowered = text.slice(0, 64).toLowerCase();
    if (!lowered.startsWith('herdr://')) return null;
    const rest = lowered.slice('herdr://'.length);
    const end = rest.search(/[?/#]/);
    return end < 0 ? rest : rest.slice(0, end);
  },

  /**
   * The decoded known fields of `text`, a `herdr://<host>?…` link.
   * @param {string} text
   * @param {string} host
   * @param {ReadonlySet<string>} knownKeys
   * @returns {Map<string, string>}
   */
  fields(text, host, knownKeys) {
    const bytes = utf8(text);
    checkText(bytes);
    const start = `herdr://${host}?`;
    const colon = bytes.indexOf(0x3a);
    if (colon < 0 || new TextDecoder().decode(bytes.subarray(0, colon)).toLowerCase() !== 'herdr' ||
      bytes[colon + 1] !== 0x2f || bytes[colon + 2] !== 0x2f) {
      throw new PairingCodeError('notAPairingCode', null, `This is not a herdr pairing code (it must start with ${start})`);
    }
    const rest = bytes.subarray(colon + 3);
    if (rest.includes(0x23)) throw new PairingCodeError('malformed', null, 'The pairing code must not have a fragment (#)');
    let authorityEnd = rest.findIndex((byte) => byte === 0x3f || byte === 0x2f);
    if (authorityEnd < 0) authorityEnd = rest.length;
    const authority = new TextDecoder().decode(rest.subarray(0, authorityEnd));
    if (authority.toLowerCase() !== host) {
      const reason = authority.includes('@') || authority.includes(':')
        ? 'The pairing code must not carry a user, password or port'
        : `This is not a herdr pairing code (its host must be ${host})`;
      throw new PairingCodeError('malformed', null, reason);
    }
    if (authorityEnd >= rest.length || rest[authorityEnd] !== 0x3f) {
      throw new PairingCodeError('malformed', null, `The pairing code must have no path and a query (${start}…)`);
    }
    return queryFields(rest.subarray(authorityEnd + 1), knownKeys);
  },
});

export const PairingCodeRules = Object.freeze({
  maximumNameLength: MAXIMUM_NAME_LENGTH,
  maximumCodeLength: MAXIMUM_CODE_LENGTH,
  maximumLifetime: MAXIMUM_LIFETIME,

  /**
   * The computer's display name (`n`): at most 64 characters (grapheme clusters).
   * @param {string} text
   * @returns {string}
   */
  computerName(text) {
    if (characters(text).length > MAXIMUM_NAME_LENGTH) {
      throw new PairingCodeError('invalidField', 'n', `The computer name (n) is longer than ${MAXIMUM_NAME_LENGTH} characters`);
    }
    return text;
  },

  /**
   * The herdr session to attach to (`s`): herdr's name rule.
   * @param {string | undefined} text
   * @returns {string | null}
   */
  session(text) {
    if (text === undefined) return null;
    if (!HerdrSessionName.isValid(text)) {
      throw new PairingCodeError('invalidField', 's', 'The herdr session (s) must be 1-64 of A-Z a-z 0-9 . _ - (not . or ..)');
    }
    return text;
  },

  /**
   * The expiry (`x`): whole Unix seconds, in the future and at most 900 s after `now`.
   * @param {string} text
   * @param {number} now Unix seconds
   * @returns {number} Unix seconds
   */
  expiry(text, now) {
    if (!/^[0-9]{1,12}$/.test(text)) throw new PairingCodeError('invalidField', 'x', 'The expiry (x) must be Unix seconds');
    const expiry = Number(text);
    if (!(expiry > now)) {
      throw new PairingCodeError('expired', 'x', 'The pairing code has expired; show a new one on the computer');
    }
    if (expiry - now > MAXIMUM_LIFETIME) {
      throw new PairingCodeError('invalidField', 'x', 'The pairing code claims to be valid for more than 15 minutes; it is not trusted');
    }
    return expiry;
  },
});
