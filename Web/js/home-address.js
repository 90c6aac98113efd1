// Where a computer's home door listens, as the companion code (`home=`) and the channel
// (`{"home":[…]}`) carry it: `a.b.c.d:port` for IPv4, `[v6]:port` for IPv6, the address numeric
// and of a kind PeerGate calls the home network (private, IPv4 link-local, unique-local).
// Loopback, tailnet, public and IPv6 link-local addresses (whose scope means nothing on another
// device) are refused. The twin of PeerGate's HomeAddress.

import { IPAddress } from './ip-address.js';
import { peerKindOf } from './peer-kind.js';
import { utf8 } from './bytes.js';

/**
 * @typedef {object} HomeAddress
 * @property {IPAddress} address an IPv4-mapped address is kept as the IPv4 address it carries
 * @property {number} port 1–65535
 */

/** Why text is not a home address. */
export class HomeAddressError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'HomeAddressError';
    /** @readonly @type {'invalid'} */
    this.kind = 'invalid';
  }
}

/** Longest text of one address: `[` 45 `]:` 5. */
const MAXIMUM_TEXT_LENGTH = 53;

/**
 * Peer text safe to show: bytes outside printable ASCII become "?", and text over 61 bytes is
 * cut with "…" (PeerDecision.displayText).
 * @param {string} text
 */
function shown(text) {
  const limit = 61;
  const bytes = utf8(text);
  const kept = Array.from(bytes.subarray(0, limit), (byte) => (byte >= 0x20 && byte <= 0x7e ? String.fromCharCode(byte) : '?'));
  return kept.join('') + (bytes.length > limit ? '…' : '');
}

/**
 * A checked address: home-network kind, port 1…65535.
 * @param {IPAddress} address
 * @param {number} port
 * @returns {HomeAddress}
 */
function make(address, port) {
  const text = IPAddress.text(address);
  if (!(Number.isInteger(port) && port > 0 && port <= 0xffff)) {
    throw new HomeAddressError(`${text}: port ${port} is not a port to connect to`);
  }
  const kind = peerKindOf(address);
  if (kind !== 'private' && kind !== 'link-local' && kind !== 'unique-local') {
    throw new HomeAddressError(`${text} is a ${kind} address, not a home-network one`);
  }
  const b = address.bytes;
  if (b.length === 16 && b[0] === 0xfe && (b[1] & 0xc0) === 0x80) {
    throw new HomeAddressError(`${text} is IPv6 link-local: its scope means nothing on another device`);
  }
  return { address: IPAddress.unwrappingIPv4Mapped(address), port };
}

export const HomeAddress = Object.freeze({
  /** The home door's port when the configuration names none. */
  defaultPort: 4610,
  maximumTextLength: MAXIMUM_TEXT_LENGTH,
  /** Most addresses a list carries (a computer on a few home networks at once). */
  maximumCount: 8,
  make,

  /**
   * Parses `a.b.c.d:port` or `[v6]:port`; throws a `HomeAddressError` for anything else.
   * @param {string} text
   * @returns {HomeAddress}
   */
  parse(text) {
    if (utf8(text).length > MAXIMUM_TEXT_LENGTH) {
      throw new HomeAddressError(`${shown(text)} is longer than ${MAXIMUM_TEXT_LENGTH} characters`);
    }
    let host;
    let portText;
    const bracketed = text.startsWith('[');
    if (bracketed) {
      const close = text.indexOf(']');
      if (close < 0 || !text.startsWith(']:', close)) throw new HomeAddressError(`${shown(text)} is not [IPv6]:port`);
      host = text.slice(1, close);
      portText = text.slice(close + 2);
    } else {
      const colon = text.lastIndexOf(':');
      if (colon < 0 || text.slice(0, colon).includes(':')) {
        throw new HomeAddressError(`${shown(text)} is not IPv4:port or [IPv6]:port`);
      }
      host = text.slice(0, colon);
      portText = text.slice(colon + 1);
    }
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 0xffff || Number(portText) === 0) {
      throw new HomeAddressError(`${shown(text)} has no port 1-65535`);
    }
    const address = IPAddress.parseNumeric(host);
    if (address === null || bracketed !== (IPAddress.family(address) === 'ipv6')) {
      throw new HomeAddressError(`${shown(text)} does not hold a numeric IP address`);
    }
    return make(address, Number(portText));
  },

  /**
   * `192.0.2.7:4610` or `[fd00::7]:4610` (as text it parses back).
   * @param {HomeAddress} home
   * @returns {string}
   */
  text(home) {
    const address = IPAddress.text(home.address);
    return IPAddress.family(home.address) === 'ipv4' ? `${address}:${home.port}` : `[${address}]:${home.port}`;
  },

  /** @param {HomeAddress} a @param {HomeAddress} b */
  equal(a, b) {
    return a.port === b.port && IPAddress.equal(a.address, b.address);
  },
});
