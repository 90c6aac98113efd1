// Where a relay is, parsed the way the iTerm2 phone parses the `relay=` of a pairing code
// (docs/relay.md "The client library"): `https://host[:port]` and nothing else (no user info, no
// path beyond `/`, no query or fragment); `http://` only for a loopback host. `origin` is what
// clients bind into every join and delete signature. The browser reaches the relay's WebSocket
// at `wss://<authority>/?room=<room>` (it cannot send the `x-relay-room` header; herdr-relay with
// `--web-client` takes the room from the URL). The twin of RelayEndpoint.

import { IPAddress } from './ip-address.js';

/**
 * @typedef {object} RelayEndpoint
 * @property {string} origin `https://host` or `https://host:port` (default port dropped), host lowercased, IPv6 in brackets
 * @property {string} host the host, lowercased; an IPv6 address without brackets
 * @property {number} port
 * @property {boolean} usesTLS whether the scheme is https
 * @property {string} authority the origin without its scheme (the `Host` header)
 */

/** A relay URL that is not one (kind `invalidEndpoint`), saying what is wrong with it. */
export class RelayEndpointError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'RelayEndpointError';
    /** @readonly @type {'invalidEndpoint'} */
    this.kind = 'invalidEndpoint';
  }
}

/**
 * "localhost", 127.0.0.0/8 and ::1.
 * @param {string} host lowercased, IPv6 without brackets
 */
function isLoopback(host) {
  if (host === 'localhost') return true;
  const address = IPAddress.parseNumeric(host);
  if (address === null) return false;
  const b = address.bytes;
  if (b.length === 4) return b[0] === 127;
  return b.subarray(0, 15).every((byte) => byte === 0) && b[15] === 1;
}

/**
 * Parses `text`; throws a `RelayEndpointError` saying what is wrong.
 * @param {string} text
 * @returns {RelayEndpoint}
 */
function parse(text) {
  /** @param {string} why */
  const invalid = (why) => new RelayEndpointError(`bad relay URL ${text}: ${why}`);
  if (!/^[\x21-\x7e]*$/.test(text)) throw invalid('only printable ASCII without spaces is allowed');
  const lowered = text.toLowerCase();
  let secure;
  let rest;
  if (lowered.startsWith('https://')) {
    secure = true;
    rest = text.slice(8);
  } else if (lowered.startsWith('http://')) {
    secure = false;
    rest = text.slice(7);
  } else {
    throw invalid('the scheme must be https');
  }
  if (rest.includes('?')) throw invalid('a query is not allowed');
  if (rest.includes('#')) throw invalid('a fragment is not allowed');
  let authority = rest;
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    authority = rest.slice(0, slash);
    if (rest.slice(slash) !== '/') throw invalid('a path is not allowed');
  }
  if (authority.includes('@')) throw invalid('user info is not allowed');
  let hostPart;
  /** @type {string | null} */
  let portPart = null;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) throw invalid('unterminated IPv6 address');
    hostPart = authority.slice(1, close);
    const after = authority.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) throw invalid('junk after the IPv6 address');
      portPart = after.slice(1);
    }
    const address = IPAddress.parseNumeric(hostPart);
    if (address === null || IPAddress.family(address) !== 'ipv6') throw invalid('bad IPv6 address');
  } else {
    const colon = authority.indexOf(':');
    hostPart = colon < 0 ? authority : authority.slice(0, colon);
    if (colon >= 0) portPart = authority.slice(colon + 1);
    if (hostPart === '') throw invalid('the host is missing');
    if (!/^[A-Za-z0-9.-]+$/.test(hostPart)) throw invalid("the host may hold only letters, digits, '-' and '.'");
    if (hostPart.startsWith('.') || hostPart.includes('..')) throw invalid('bad host name');
  }
  const defaultPort = secure ? 443 : 80;
  let port = defaultPort;
  if (portPart !== null) {
    if (!/^[0-9]{1,5}$/.test(portPart) || Number(portPart) === 0 || Number(portPart) > 65535) {
      throw invalid('the port must be a number from 1 to 65535');
    }
    port = Number(portPart);
  }
  const host = hostPart.toLowerCase();
  if (!secure && !isLoopback(host)) throw invalid('http:// is only allowed for a loopback host; use https');
  const bracketed = host.includes(':') ? `[${host}]` : host;
  const authorityText = port === defaultPort ? bracketed : `${bracketed}:${port}`;
  return Object.freeze({
    origin: `${secure ? 'https' : 'http'}://${authorityText}`, host, port, usesTLS: secure, authority: authorityText,
  });
}

export const RelayEndpoint = Object.freeze({
  parse,
  isLoopback,

  /**
   * The WebSocket address of a room for a browser: `wss://<authority>/?room=<room>` (`ws://` for
   * a loopback relay over http), the room as the relay names it (64 lowercase hex digits).
   * @param {RelayEndpoint} endpoint
   * @param {string} room
   * @returns {string}
   */
  webSocketURL(endpoint, room) {
    return `${endpoint.usesTLS ? 'wss' : 'ws'}://${endpoint.authority}/?room=${room}`;
  },
});
