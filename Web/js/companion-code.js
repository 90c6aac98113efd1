// The pairing code a computer (`herdr-host pair`) shows for the Noise roads (docs/companion.md
// "The code"), in two forms with the same fields and the same checks:
//
//   herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs=…&pid=…&relay=…&n=…[&home=…][&s=…][&x=…]
//   https://relay.example.com/#v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs=…&pid=…&relay=…&n=…
//
// The second is an address of the web client whose fragment (after `#`, never sent to a
// server) is the first's query: a phone's camera opens it in the browser, which pairs. The twin
// of CompanionCode (the `https://` form is the web client's own).

import { HerdrLink, PairingCodeError, PairingCodeRules } from './herdr-link.js';
import { RelayEndpoint } from './relay-endpoint.js';
import { HomeAddress } from './home-address.js';
import { RoomName } from './relay-join.js';
import { CompanionProfile } from './companion-profile.js';
import { fromBase64Url, toBase64Url, utf8 } from './bytes.js';

/** @typedef {import('./relay-endpoint.js').RelayEndpoint} RelayEndpointValue */

/**
 * @typedef {object} CompanionCode
 * @property {Uint8Array} staticPublicKey the computer's Noise static public key, `rs`
 * @property {Uint8Array} pairingID 16 random bytes naming this pairing
 * @property {string} pidText the pairing id as the code spells it: 22 characters of unpadded base64url
 * @property {string} room the relay room: lowercase hex SHA256(canonical("iterm2-room", [rs, pid]))
 * @property {RelayEndpointValue | null} relay the relay, reduced to its origin; null for a code of the home network alone
 * @property {string} computerName the computer's display name (at most 64 characters; may be empty)
 * @property {string | null} session the herdr session to attach to; null for herdr's default
 * @property {number | null} expiresAt when the code stops working (Unix seconds), if it says
 * @property {import('./home-address.js').HomeAddress[]} home where the computer's home door listens
 */

const HOST = 'companion';
const VERSION = '1';
const STATIC_KEY_SIZE = 32;
const PAIRING_ID_SIZE = 16;
const KNOWN_KEYS = new Set(['v', 'proto', 'rs', 'pid', 'relay', 'n', 'home', 's', 'x']);

/**
 * The bytes of canonical unpadded base64url, or null.
 * @param {string} text
 * @returns {Uint8Array | null}
 */
function canonicalBase64Url(text) {
  try {
    return text === '' ? null : fromBase64Url(text);
  } catch {
    return null;
  }
}

/**
 * A code from its fields, checked.
 * @param {{staticPublicKey: Uint8Array, pairingID: Uint8Array, relay: RelayEndpointValue | null, computerName: string,
 *   session?: string | null, expiresAt?: number | null, home?: import('./home-address.js').HomeAddress[]}} fields
 * @returns {CompanionCode}
 */
function make(fields) {
  if (fields.staticPublicKey.length !== STATIC_KEY_SIZE || fields.pairingID.length !== PAIRING_ID_SIZE) {
    throw new RangeError('a companion code carries a 32-byte key and a 16-byte pairing id');
  }
  const pidText = toBase64Url(fields.pairingID);
  return Object.freeze({
    staticPublicKey: fields.staticPublicKey.slice(),
    pairingID: fields.pairingID.slice(),
    pidText,
    room: RoomName.derive(fields.staticPublicKey, pidText),
    relay: fields.relay,
    computerName: fields.computerName,
    session: fields.session ?? null,
    expiresAt: fields.expiresAt ?? null,
    home: fields.home ?? [],
  });
}

/**
 * The fields as the code writes them, in order.
 * @param {CompanionCode} code
 * @returns {[string, string][]}
 */
function fieldsOf(code) {
  /** @type {[string, string][]} */
  const fields = [
    ['v', VERSION], ['proto', CompanionProfile.protocolName], ['rs', toBase64Url(code.staticPublicKey)], ['pid', code.pidText],
  ];
  if (code.relay !== null) fields.push(['relay', code.relay.origin]);
  fields.push(['n', code.computerName]);
  if (code.home.length > 0) fields.push(['home', code.home.map((address) => HomeAddress.text(address)).join(',')]);
  if (code.session !== null) fields.push(['s', code.session]);
  if (code.expiresAt !== null) fields.push(['x', String(Math.floor(code.expiresAt))]);
  return fields;
}

/**
 * Checks the decoded fields (CompanionCode.init(parsing:)).
 * @param {Map<string, string>} fields
 * @param {number} now Unix seconds
 * @returns {CompanionCode}
 */
function fromFields(fields, now) {
  /** @param {string} key @param {string} name @returns {string} */
  const required = (key, name) => {
    const value = fields.get(key);
    if (value === undefined) throw new PairingCodeError('missingField', key, `The pairing code has no ${name} (${key})`);
    return value;
  };
  if (required('v', 'version') !== VERSION) {
    throw new PairingCodeError('unsupportedVersion', 'v', 'The pairing code has an unsupported version; update the web client');
  }
  if (required('proto', 'protocol') !== CompanionProfile.protocolName) {
    throw new PairingCodeError('unsupportedVersion', 'proto',
      `The pairing code asks for a protocol other than ${CompanionProfile.protocolName}; update the web client`);
  }
  const key = canonicalBase64Url(required('rs', 'computer key'));
  if (key === null || key.length !== STATIC_KEY_SIZE) {
    throw new PairingCodeError('invalidField', 'rs', 'The computer key (rs) must be 32 bytes of canonical unpadded base64url');
  }
  const pidText = required('pid', 'pairing id');
  const pid = pidText.startsWith('-') ? null : canonicalBase64Url(pidText);
  if (pid === null || pid.length !== PAIRING_ID_SIZE) {
    throw new PairingCodeError('invalidField', 'pid', 'The pairing id (pid) must be 16 bytes of canonical unpadded base64url');
  }
  /** @type {RelayEndpointValue | null} */
  let relay = null;
  const relayText = fields.get('relay');
  if (relayText !== undefined) {
    try {
      relay = RelayEndpoint.parse(relayText);
    } catch (error) {
      throw new PairingCodeError('invalidField', 'relay',
        `The relay (relay) must be https://host[:port] with nothing after it (${error instanceof Error ? error.message : error})`);
    }
  }
  const computerName = PairingCodeRules.computerName(required('n', 'computer name'));
  let home;
  try {
    home = parseHomeList(fields.get('home') ?? '');
  } catch (error) {
    throw new PairingCodeError('invalidField', 'home',
      `The home addresses (home) must be up to ${HomeAddress.maximumCount} home-network addr:port entries (${error instanceof Error ? error.message : error})`);
  }
  if (relay === null && home.length === 0) {
    throw new PairingCodeError('missingField', 'relay', 'The pairing code has no relay (relay) and no home address (home)');
  }
  const session = PairingCodeRules.session(fields.get('s'));
  const expiryText = fields.get('x');
  const expiresAt = expiryText === undefined ? null : PairingCodeRules.expiry(expiryText, now);
  return make({ staticPublicKey: key, pairingID: pid, relay, computerName, session, expiresAt, home });
}

/**
 * A comma list of at most 8 distinct home addresses; empty text is none (HomeAddress.parseList).
 * @param {string} text
 */
function parseHomeList(text) {
  if (text === '') return [];
  const parts = text.split(',');
  if (parts.length > HomeAddress.maximumCount) throw new Error(`more than ${HomeAddress.maximumCount} addresses`);
  /** @type {import('./home-address.js').HomeAddress[]} */
  const addresses = [];
  for (const part of parts) {
    const address = HomeAddress.parse(part);
    if (addresses.some((known) => HomeAddress.equal(known, address))) throw new Error(`${part} twice`);
    addresses.push(address);
  }
  return addresses;
}

/** The longest web client address before its fragment, in UTF-8 bytes. */
const MAXIMUM_WEB_CLIENT_LENGTH = 1024;
/** The loopback hosts for which a web client's address may be http:// (CompanionCode.webClientAddress). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether `text` is an `https://` (or `http://`) address, which may carry a code in its fragment.
 * @param {string} text
 */
function isWebAddress(text) {
  const lowered = text.slice(0, 8).toLowerCase();
  return lowered.startsWith('https://') || lowered.startsWith('http://');
}

/**
 * A web client's address as `herdr-host pair --web-client` takes it: https://host[:port][/path]
 * (http:// only for a loopback host), no user, query or fragment, at most 1024 bytes; `/` added
 * when it has no path. Throws a `PairingCodeError` (`invalidField`, no field) saying why.
 * @param {string} text
 * @returns {string}
 */
function webClientAddress(text) {
  /** @param {string} why */
  const invalid = (why) => new PairingCodeError('invalidField', null, `The web client's address ${why}`);
  const bytes = utf8(text);
  const match = /^(https?):\/\/([^/?#]*)([^?#]*)$/i.exec(text);
  if (bytes.length > MAXIMUM_WEB_CLIENT_LENGTH || bytes.some((byte) => byte <= 0x20 || byte === 0x7f) || match === null) {
    if (match === null && /^https?:\/\/[^#]*[?#]/i.test(text)) throw invalid('must not have a user, a query or a fragment');
    throw invalid(`must be https://host[:port][/path] (at most ${MAXIMUM_WEB_CLIENT_LENGTH} bytes)`);
  }
  const [, scheme, authority, path] = match;
  if (authority.includes('@')) throw invalid('must not have a user, a query or a fragment');
  const hostAndPort = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?$/.exec(authority);
  if (hostAndPort === null || hostAndPort[1].startsWith('.') || hostAndPort[1].includes('..') ||
    (hostAndPort[2] !== undefined && (Number(hostAndPort[2]) === 0 || Number(hostAndPort[2]) > 65535))) {
    throw invalid(`must be https://host[:port][/path] (at most ${MAXIMUM_WEB_CLIENT_LENGTH} bytes)`);
  }
  if (scheme.toLowerCase() !== 'https' && !(scheme.toLowerCase() === 'http' && LOOPBACK_HOSTS.has(hostAndPort[1].toLowerCase()))) {
    throw invalid('must be https:// (http:// only for a loopback host)');
  }
  return path === '' ? text + '/' : text;
}

/**
 * The `herdr://companion?` link of a web address's fragment; null when `text` is no web address.
 * The part before `#` must be a web client's address; what follows is read exactly as the link's
 * query (HerdrLink's checks, its length among them).
 * @param {string} text
 * @returns {string | null}
 */
function linkFromWebAddress(text) {
  if (!isWebAddress(text)) return null;
  const hash = text.indexOf('#');
  if (hash < 0 || hash === text.length - 1) {
    throw new PairingCodeError('notAPairingCode', null,
      'This address carries no pairing code (nothing after #): scan the code herdr-host pair shows');
  }
  const address = text.slice(0, hash);
  if (utf8(address).length > MAXIMUM_WEB_CLIENT_LENGTH) {
    throw new PairingCodeError('tooLong', null,
      `The address before its pairing code is longer than ${MAXIMUM_WEB_CLIENT_LENGTH} bytes`);
  }
  try {
    webClientAddress(address);
  } catch (error) {
    throw new PairingCodeError('malformed', null, error instanceof Error ? error.message : String(error));
  }
  return `herdr://${HOST}?${text.slice(hash + 1)}`;
}

export const CompanionCode = Object.freeze({
  host: HOST,
  version: VERSION,
  staticKeySize: STATIC_KEY_SIZE,
  pairingIDSize: PAIRING_ID_SIZE,
  maximumLength: HerdrLink.maximumLength,
  make,

  /**
   * Parses and checks a code in either form; `now` (Unix seconds) decides expiry when the code
   * has one. Throws a `PairingCodeError` naming the field at fault.
   * @param {string} text
   * @param {number} now
   * @returns {CompanionCode}
   */
  parse(text, now) {
    return fromFields(HerdrLink.fields(linkFromWebAddress(text) ?? text, HOST, KNOWN_KEYS), now);
  },

  /**
   * The code as a link, values percent-escaped.
   * @param {CompanionCode} code
   * @returns {string}
   */
  url(code) {
    return HerdrLink.url(HOST, fieldsOf(code));
  },

  /**
   * The link's query: the fields after `herdr://companion?`, and a web address's fragment.
   * @param {CompanionCode} code
   * @returns {string}
   */
  query(code) {
    return HerdrLink.query(fieldsOf(code));
  },

  /**
   * The code as the address of a web client with the code in its fragment: `<client>#<query>`.
   * `client` is checked by `webClientAddress` (the relay's origin and `/` when not given).
   * @param {CompanionCode} code
   * @param {string} [client]
   * @returns {string}
   */
  webAddress(code, client) {
    if (client === undefined && code.relay === null) {
      throw new RangeError('a code of the home network alone has no web client: a browser cannot take the home road');
    }
    return `${webClientAddress(client ?? /** @type {RelayEndpointValue} */ (code.relay).origin)}#${CompanionCode.query(code)}`;
  },

  isWebAddress,
  webClientAddress,
  maximumWebClientLength: MAXIMUM_WEB_CLIENT_LENGTH,
});
