// What a peer address is, judged from its bytes: the first range of the classification table
// that holds it (an IPv4-mapped address judged as the IPv4 address it carries), else public.
// The twin of PeerGate's PeerKind and PeerRange.

import { IPAddress } from './ip-address.js';

/** @typedef {'loopback' | 'private' | 'link-local' | 'unique-local' | 'tailnet' | 'public'} PeerKind */

/**
 * @param {string} network
 * @param {number} prefixLength
 * @param {PeerKind} kind
 * @param {string} source where the range is defined
 */
function range(network, prefixLength, kind, source) {
  const address = IPAddress.parseNumeric(network);
  if (address === null) throw new Error(`peer-kind: bad table entry ${network}`);
  return Object.freeze({ network: address, prefixLength, kind, source });
}

/** The table, most specific first: the tailnet's IPv6 /48 lies inside fc00::/7 and must win. */
export const PEER_RANGES = Object.freeze([
  range('127.0.0.0', 8, 'loopback', 'RFC 1122 §3.2.1.3'),
  range('10.0.0.0', 8, 'private', 'RFC 1918'),
  range('172.16.0.0', 12, 'private', 'RFC 1918'),
  range('192.168.0.0', 16, 'private', 'RFC 1918'),
  range('169.254.0.0', 16, 'link-local', 'RFC 3927'),
  range('100.64.0.0', 10, 'tailnet', "RFC 6598; Tailscale's IPv4 range"),
  range('::1', 128, 'loopback', 'RFC 4291 §2.5.3'),
  range('fe80::', 10, 'link-local', 'RFC 4291 §2.5.6'),
  range('fd7a:115c:a1e0::', 48, 'tailnet', "Tailscale's IPv6 range"),
  range('fc00::', 7, 'unique-local', 'RFC 4193'),
]);

/**
 * The kind of an address.
 * @param {IPAddress} address
 * @returns {PeerKind}
 */
export function peerKindOf(address) {
  const judged = IPAddress.unwrappingIPv4Mapped(address);
  const row = PEER_RANGES.find((entry) => IPAddress.hasPrefix(judged, entry.network, entry.prefixLength));
  return row === undefined ? 'public' : row.kind;
}
