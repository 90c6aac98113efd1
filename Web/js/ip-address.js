// An IPv4 or IPv6 address as its network-order bytes: 4 for IPv4, 16 for IPv6. Parsed from
// numeric text by the rules of POSIX inet_pton (dotted-quad IPv4 of four decimal parts with no
// leading zeros; any IPv6 text form, an IPv4 dotted quad in its last 32 bits included) and
// written back as inet_ntop does (RFC 5952: lowercase, the longest run of two or more zero
// groups as `::`, the first of equal runs; IPv4-mapped and -compatible addresses with a dotted
// quad). Two spellings of one address are the same bytes. The twin of PeerGate's IPAddress.

/**
 * @typedef {object} IPAddress
 * @property {Uint8Array} bytes 4 (IPv4) or 16 (IPv6) bytes, network order
 */

/** Longest numeric address text: `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255` (INET6_ADDRSTRLEN less its NUL). */
const MAXIMUM_ADDRESS_LENGTH = 45;

/**
 * Four decimal parts, each 0–255 without a leading zero.
 * @param {string} text
 * @returns {Uint8Array | null}
 */
function parseIPv4(text) {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i];
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    bytes[i] = value;
  }
  return bytes;
}

/**
 * Groups of 1–4 hex digits between single colons, at most one `::` standing for one or more
 * zero groups, and optionally a dotted quad as the last 32 bits.
 * @param {string} text
 * @returns {Uint8Array | null}
 */
function parseIPv6(text) {
  const gap = text.indexOf('::');
  if (gap >= 0 && text.indexOf('::', gap + 1) >= 0) return null;
  /**
   * The 16-bit groups of one side of `::` (or of the whole text).
   * @param {string} side
   * @param {boolean} last whether this side ends the text (where a dotted quad may stand)
   * @returns {number[] | null}
   */
  const groups = (side, last) => {
    if (side === '') return [];
    const fields = side.split(':');
    /** @type {number[]} */
    const out = [];
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i];
      if (last && i === fields.length - 1 && field.includes('.')) {
        const quad = parseIPv4(field);
        if (quad === null) return null;
        out.push((quad[0] << 8) | quad[1], (quad[2] << 8) | quad[3]);
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(field)) return null;
        out.push(parseInt(field, 16));
      }
    }
    return out;
  };
  /** @type {number[]} */
  let words;
  if (gap >= 0) {
    const head = groups(text.slice(0, gap), false);
    const tail = groups(text.slice(gap + 2), true);
    if (head === null || tail === null || head.length + tail.length > 7) return null;
    words = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = groups(text, true);
    if (all === null || all.length !== 8) return null;
    words = all;
  }
  const bytes = new Uint8Array(16);
  words.forEach((word, i) => {
    bytes[2 * i] = word >>> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  return bytes;
}

/** @param {Uint8Array} bytes @returns {boolean} */
function isIPv4Mapped(bytes) {
  return bytes.length === 16 && bytes.subarray(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff &&
    bytes[11] === 0xff;
}

export const IPAddress = Object.freeze({
  maximumAddressLength: MAXIMUM_ADDRESS_LENGTH,

  /**
   * Exactly one numeric address, nothing trimmed, no scope suffix; null for anything else.
   * @param {string} text
   * @returns {IPAddress | null}
   */
  parseNumeric(text) {
    if (text.includes('\0') || text.length > MAXIMUM_ADDRESS_LENGTH) return null;
    const bytes = parseIPv4(text) ?? parseIPv6(text);
    return bytes === null ? null : { bytes };
  },

  /** @param {IPAddress} address @returns {'ipv4' | 'ipv6'} */
  family(address) {
    return address.bytes.length === 4 ? 'ipv4' : 'ipv6';
  },

  /**
   * True for IPv6 addresses in `::ffff:0:0/96` (RFC 4291 §2.5.5.2).
   * @param {IPAddress} address
   */
  isIPv4Mapped(address) {
    return isIPv4Mapped(address.bytes);
  },

  /**
   * For an IPv6 address in `::ffff:0:0/96`, the IPv4 address it carries; otherwise the address.
   * @param {IPAddress} address
   * @returns {IPAddress}
   */
  unwrappingIPv4Mapped(address) {
    return isIPv4Mapped(address.bytes) ? { bytes: address.bytes.slice(12, 16) } : address;
  },

  /**
   * True when the first `length` bits equal those of `network` (same family only).
   * @param {IPAddress} address
   * @param {IPAddress} network
   * @param {number} length
   */
  hasPrefix(address, network, length) {
    if (network.bytes.length !== address.bytes.length || length < 0 || length > address.bytes.length * 8) return false;
    for (let index = 0, remaining = length; remaining > 0; index++, remaining -= 8) {
      const mask = remaining >= 8 ? 0xff : (0xff << (8 - remaining)) & 0xff;
      if ((address.bytes[index] & mask) !== (network.bytes[index] & mask)) return false;
    }
    return true;
  },

  /** @param {IPAddress} a @param {IPAddress} b */
  equal(a, b) {
    return a.bytes.length === b.bytes.length && a.bytes.every((byte, i) => byte === b.bytes[i]);
  },

  /**
   * The canonical text, as inet_ntop writes it.
   * @param {IPAddress} address
   * @returns {string}
   */
  text(address) {
    const b = address.bytes;
    if (b.length === 4) return Array.from(b).join('.');
    const words = Array.from({ length: 8 }, (_, i) => (b[2 * i] << 8) | b[2 * i + 1]);
    let bestStart = -1;
    let bestLength = 0;
    for (let i = 0; i < 8;) {
      if (words[i] !== 0) {
        i += 1;
        continue;
      }
      let j = i;
      while (j < 8 && words[j] === 0) j += 1;
      if (j - i > bestLength) {
        bestStart = i;
        bestLength = j - i;
      }
      i = j;
    }
    if (bestLength < 2) bestStart = -1;
    const quad = () => `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
    // IPv4-compatible (::a.b.c.d, but not ::1 or ::) and IPv4-mapped (::ffff:a.b.c.d) addresses.
    const embedded = bestStart === 0 &&
      (bestLength === 6 || (bestLength === 7 && words[7] !== 1) || (bestLength === 5 && words[5] === 0xffff));
    let text = '';
    for (let i = 0; i < 8; i++) {
      if (i === bestStart) {
        text += '::';
        i += bestLength - 1;
        continue;
      }
      if (i > 0 && i !== bestStart + bestLength) text += ':';
      if (i === 6 && embedded) return text + quad();
      text += words[i].toString(16);
    }
    return text;
  },
});
