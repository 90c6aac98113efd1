// The control messages inside the end-to-end channel (docs/companion.md, "Inside the channel"):
// each is one channel message starting with `{` (channel-message.js tells the kinds apart), a
// JSON object with exactly one key naming it, at most 4096 bytes. An unknown key is a message of
// a later version, ignored; a malformed message ends the channel. The twin of CompanionMessage.
//
// A message is a plain object tagged by `type`, named as the Swift cases. `parse` throws a
// `CompanionMessageError` with a stable `kind` for anything malformed, never anything else.

import { RelayJSON } from './relay-json.js';
import { HomeAddress } from './home-address.js';
import { printableText } from './printable-text.js';
import { SessionLimits } from './session-wire.js';
import { utf8 } from './bytes.js';

/**
 * What a device says about itself on connecting.
 * @typedef {object} DeviceStatus
 * @property {string} name the device's display name: 1–64 printable code points
 * @property {Uint8Array} roomSecret the 32 random bytes the device minted at pairing
 * @property {boolean} registered whether the device has registered the room's verifier
 */

/**
 * - `pairing`: computer → device, the first message after a fresh pairing's handshake.
 * - `status`: device → computer, first on every connection.
 * - `statusAcknowledged`: computer → device, `{"ack":"status"}`: the status is stored.
 * - `registered`: device → computer: the relay took the room's verifier.
 * - `home`: computer → device: where its home door listens now (empty: nowhere).
 * - `ping`, `pong`: either way; a ping is answered at once by a pong of the same number.
 * - `inputReceived`: computer → device, before the `started` that answers a `resume`.
 * - `window`: device → computer: the output window it wants from now on.
 * - `agents`: device → computer: start (`watch`) or stop the agents board.
 * - `serves`: computer → device, before every ack: what it serves beyond sessions of bytes.
 * - `unknown`: a control message of a later version, by its key: ignored.
 * @typedef {{type: 'pairing', accepted: boolean}
 *   | {type: 'status', status: DeviceStatus}
 *   | {type: 'statusAcknowledged'}
 *   | {type: 'registered'}
 *   | {type: 'home', addresses: HomeAddress[]}
 *   | {type: 'ping', number: number}
 *   | {type: 'pong', number: number}
 *   | {type: 'inputReceived', stream: number, bytes: bigint}
 *   | {type: 'window', stream: number, bytes: number}
 *   | {type: 'agents', watch: boolean}
 *   | {type: 'serves', served: Map<string, number>}
 *   | {type: 'unknown', key: string}} CompanionMessage
 */

/**
 * A stable kind, meant for code: `tooLong` (over 4096 bytes), `notOneKeyObject` (not a JSON
 * object with exactly one key, or not UTF-8), `unencodable` (the encoder was given a value the
 * message cannot carry: a programming error), or the key of the message that is malformed.
 * @typedef {'tooLong' | 'notOneKeyObject' | 'pairing' | 'status' | 'ack' | 'registered' | 'home' | 'ping'
 *   | 'pong' | 'inputReceived' | 'window' | 'agents' | 'serves' | 'unencodable'} CompanionMessageErrorKind
 */

/** A control message that does not parse: the peer is broken or hostile; the channel ends. */
export class CompanionMessageError extends Error {
  /**
   * @param {CompanionMessageErrorKind} kind
   * @param {string} message what came ("an ack of something unknown")
   */
  constructor(kind, message) {
    super(message);
    this.name = 'CompanionMessageError';
    /** @readonly @type {CompanionMessageErrorKind} */
    this.kind = kind;
  }
}

/** The longest control message, in bytes ("at most 4096 bytes"). */
const MAXIMUM_LENGTH = 4096;
/** The most keys of a `serves`. */
const MAXIMUM_SERVED = 16;
/** The longest device name, in code points (PairingCodeRules.maximumNameLength). */
const MAXIMUM_NAME_LENGTH = 64;
/** A room secret: 32 bytes (RelayJoinKey.roomSecretSize). */
const ROOM_SECRET_SIZE = 32;
/** The largest u32: a ping's number and a stream. */
const U32_MAX = 0xffffffff;
/** The largest version `serves` carries: a non-negative i32. */
const MAXIMUM_SERVED_VERSION = 0x7fffffff;

/**
 * A name `serves` can hold: 1–32 ASCII letters, digits, `-` and `_`.
 * @param {string} name
 */
function isServedName(name) {
  return /^[A-Za-z0-9_-]{1,32}$/.test(name);
}

/**
 * @param {number | null} value
 * @returns {value is number} whether `value` is a u32
 */
function isU32(value) {
  return value !== null && value >= 0 && value <= U32_MAX;
}

/**
 * @param {string} text
 * @returns {HomeAddress | null}
 */
function homeAddressOrNull(text) {
  try {
    return HomeAddress.parse(text);
  } catch {
    return null;
  }
}

/**
 * The bytes of `message`, as the Swift side writes them. Throws a `CompanionMessageError` of
 * kind `unencodable` for a value the message cannot carry (a ping number outside u32, a room
 * secret not of 32 bytes…).
 * @param {CompanionMessage} message
 * @returns {Uint8Array}
 */
function encode(message) {
  /** @param {boolean} ok @param {string} what */
  const check = (ok, what) => {
    if (!ok) throw new CompanionMessageError('unencodable', `${message.type}: ${what}`);
  };
  let text;
  switch (message.type) {
    case 'pairing':
      text = `{"pairing":"${message.accepted ? 'accepted' : 'rejected'}"}`;
      break;
    case 'status': {
      const status = message.status;
      check(status.roomSecret.length === ROOM_SECRET_SIZE, `a room secret is ${ROOM_SECRET_SIZE} bytes`);
      text = `{"status":{"v":1,"name":${RelayJSON.quoted(status.name)},"roomSecret":"${RelayJSON.base64(status.roomSecret)}",` +
        `"registered":${status.registered}}}`;
      break;
    }
    case 'statusAcknowledged':
      text = '{"ack":"status"}';
      break;
    case 'registered':
      text = '{"registered":true}';
      break;
    case 'home':
      text = `{"home":[${message.addresses.map((address) => `"${HomeAddress.text(address)}"`).join(',')}]}`;
      break;
    case 'ping':
    case 'pong':
      check(Number.isInteger(message.number) && isU32(message.number), 'a number from 0 to 4294967295');
      text = `{"${message.type}":${message.number}}`;
      break;
    case 'inputReceived':
      check(Number.isInteger(message.stream) && isU32(message.stream), 'a stream is a u32');
      check(typeof message.bytes === 'bigint' && message.bytes >= 0n && message.bytes < BigInt(RelayJSON.integerBound),
        'bytes from 0 to 10^15 − 1');
      text = `{"inputReceived":{"stream":${message.stream},"bytes":${message.bytes}}}`;
      break;
    case 'window':
      check(Number.isInteger(message.stream) && isU32(message.stream), 'a stream is a u32');
      check(Number.isInteger(message.bytes) && Math.abs(message.bytes) < RelayJSON.integerBound, 'bytes is an integer');
      text = `{"window":{"stream":${message.stream},"bytes":${message.bytes}}}`;
      break;
    case 'agents':
      text = `{"agents":{"v":1,"watch":${message.watch}}}`;
      break;
    case 'serves': {
      const names = Array.from(message.served.keys()).sort();
      text = `{"serves":{${names.map((name) => `${RelayJSON.quoted(name)}:${message.served.get(name)}`).join(',')}}}`;
      break;
    }
    case 'unknown':
      text = `{${RelayJSON.quoted(message.key)}:null}`;
      break;
  }
  return utf8(text);
}

/**
 * Parses a control message; throws a `CompanionMessageError`, naming the problem, for anything
 * malformed (the Swift side's refusals).
 * @param {Uint8Array} bytes
 * @returns {CompanionMessage}
 */
function parse(bytes) {
  if (bytes.length > MAXIMUM_LENGTH) {
    throw new CompanionMessageError('tooLong', `a control message of ${bytes.length} bytes (at most ${MAXIMUM_LENGTH})`);
  }
  const object = RelayJSON.object(bytes);
  const keys = object === null ? [] : Object.keys(object);
  if (object === null || keys.length !== 1) {
    throw new CompanionMessageError('notOneKeyObject', 'a control message is not a JSON object with one key');
  }
  const key = keys[0];
  const value = object[key];
  switch (key) {
    case 'pairing':
      if (value === 'accepted') return { type: 'pairing', accepted: true };
      if (value === 'rejected') return { type: 'pairing', accepted: false };
      throw new CompanionMessageError('pairing', 'pairing is neither accepted nor rejected');
    case 'status': {
      const fields = RelayJSON.isObject(value) ? value : null;
      const name = fields?.name;
      const secret = fields === null ? null : RelayJSON.bytes(fields.roomSecret);
      const registered = fields === null ? null : RelayJSON.boolean(fields.registered);
      if (fields === null || RelayJSON.integer(fields.v) !== 1 || typeof name !== 'string' || name === '' ||
        name !== printableText(name, MAXIMUM_NAME_LENGTH) || secret === null || secret.length !== ROOM_SECRET_SIZE ||
        registered === null) {
        throw new CompanionMessageError('status',
          'a status is not {v: 1, name: 1-64 printable characters, roomSecret: 32 bytes, registered}');
      }
      return { type: 'status', status: { name, roomSecret: secret, registered } };
    }
    case 'ack':
      if (value !== 'status') throw new CompanionMessageError('ack', 'an ack of something unknown');
      return { type: 'statusAcknowledged' };
    case 'registered':
      if (RelayJSON.boolean(value) !== true) throw new CompanionMessageError('registered', 'registered is not true');
      return { type: 'registered' };
    case 'home': {
      if (!Array.isArray(value) || value.length > HomeAddress.maximumCount) {
        throw new CompanionMessageError('home', `home is not a list of at most ${HomeAddress.maximumCount} addresses`);
      }
      /** @type {HomeAddress[]} */
      const addresses = [];
      for (const entry of value) {
        const address = typeof entry === 'string' ? homeAddressOrNull(entry) : null;
        if (address === null || addresses.some((known) => HomeAddress.equal(known, address))) {
          throw new CompanionMessageError('home', 'home holds something other than distinct home addresses');
        }
        addresses.push(address);
      }
      return { type: 'home', addresses };
    }
    case 'ping':
    case 'pong': {
      const number = RelayJSON.integer(value);
      if (!isU32(number)) throw new CompanionMessageError(key, `${key} is not a whole number of 0 to 4294967295`);
      return { type: key, number };
    }
    case 'inputReceived': {
      const fields = RelayJSON.isObject(value) ? value : null;
      const stream = fields === null ? null : RelayJSON.integer(fields.stream);
      const count = fields === null ? null : RelayJSON.integer(fields.bytes);
      if (!isU32(stream) || count === null || count < 0) {
        throw new CompanionMessageError('inputReceived', 'inputReceived is not {stream: 0 to 4294967295, bytes: 0 or more}');
      }
      return { type: 'inputReceived', stream, bytes: BigInt(count) };
    }
    case 'window': {
      const fields = RelayJSON.isObject(value) ? value : null;
      const stream = fields === null ? null : RelayJSON.integer(fields.stream);
      const size = fields === null ? null : RelayJSON.integer(fields.bytes);
      if (!isU32(stream) || size === null || size < SessionLimits.minimumWindow || size > SessionLimits.maximumWindow) {
        throw new CompanionMessageError('window',
          `window is not {stream: 0 to 4294967295, bytes: ${SessionLimits.minimumWindow} to ${SessionLimits.maximumWindow}}`);
      }
      return { type: 'window', stream, bytes: size };
    }
    case 'agents': {
      const fields = RelayJSON.isObject(value) ? value : null;
      const version = fields === null ? null : RelayJSON.integer(fields.v);
      if (fields === null || version === null) throw new CompanionMessageError('agents', 'agents is not {v, watch}');
      // A later version of the family: this side does not speak it, as if the key were unknown.
      if (version !== 1) return { type: 'unknown', key };
      const watch = RelayJSON.boolean(fields.watch);
      if (watch === null) throw new CompanionMessageError('agents', 'agents is not {v: 1, watch: true or false}');
      return { type: 'agents', watch };
    }
    case 'serves': {
      if (!RelayJSON.isObject(value) || Object.keys(value).length > MAXIMUM_SERVED) {
        throw new CompanionMessageError('serves', `serves is not an object of at most ${MAXIMUM_SERVED} keys`);
      }
      // A name or a value this side cannot read is a later kind of offer: passed over, as an
      // unknown key is.
      /** @type {Map<string, number>} */
      const served = new Map();
      for (const [name, version] of Object.entries(value)) {
        const number = RelayJSON.integer(version);
        if (isServedName(name) && number !== null && number >= 0 && number <= MAXIMUM_SERVED_VERSION) {
          served.set(name, number);
        }
      }
      return { type: 'serves', served };
    }
    default:
      return { type: 'unknown', key };
  }
}

export const CompanionMessage = Object.freeze({
  maximumLength: MAXIMUM_LENGTH,
  maximumServed: MAXIMUM_SERVED,
  /** The `serves` key of screen sessions (docs/companion.md, "Screen sessions"). */
  screenSessions: 'screen',
  /** The version of screen sessions this side speaks. */
  screenSessionsVersion: 1,
  isServedName,
  encode,
  parse,
});
