// What a device signs, hashes and posts at the relay (interop-facts §5, docs/companion.md
// "Admission"): the canonical encoding, the transcripts, the room's name, the join key derived
// from the room secret (Ed25519 through WebCrypto, its private half a non-extractable CryptoKey)
// and the JSON bodies of `/register` and `/delete` as the Swift device writes them. The twins of
// Canonical, RelayRole, RelayTranscript, RoomName, RelayJoinKey and RelayHTTPClient's bodies.

import { concatBytes, toHex, utf8, fromBase64Url } from './bytes.js';
import { sha256 } from './sha256.js';
import { hkdfSha256 } from './hkdf.js';
import { RelayJSON } from './relay-json.js';

/** @typedef {'mac' | 'phone'} RelayRole the computer's place in a room (`mac`) and the device's (`phone`) */

/**
 * `canonical(domain, fields)` = `be32(len(domain)) ‖ domain ‖` then `be32(len(field)) ‖ field`
 * for each field. Length-prefixing every part makes it injective.
 * @param {string} domain
 * @param {Uint8Array[]} fields
 * @returns {Uint8Array}
 */
function canonical(domain, fields) {
  const parts = [];
  for (const part of [utf8(domain), ...fields]) {
    const length = new Uint8Array(4);
    new DataView(length.buffer).setUint32(0, part.length);
    parts.push(length, part);
  }
  return concatBytes(...parts);
}

export const Canonical = Object.freeze({ encode: canonical });

/** The role's byte in the join transcript: mac = 0x01, phone = 0x02. */
const ROLE_BYTES = Object.freeze({ mac: 0x01, phone: 0x02 });

export const RelayTranscript = Object.freeze({
  /** The protocol version byte, the first field of every transcript. */
  version: 0x01,
  joinDomain: 'iterm2-relay-join',
  deleteDomain: 'iterm2-relay-delete',
  attestDomain: 'iterm2-relay-attest',
  roleBytes: ROLE_BYTES,

  /**
   * `canonical("iterm2-relay-join", [0x01, role, nonce, utf8(room), utf8(origin)])`.
   * @param {RelayRole} role
   * @param {Uint8Array} nonce the Challenge's 32 raw bytes
   * @param {string} room
   * @param {string} origin
   */
  join(role, nonce, room, origin) {
    return canonical(RelayTranscript.joinDomain,
      [Uint8Array.of(RelayTranscript.version), Uint8Array.of(ROLE_BYTES[role]), nonce, utf8(room), utf8(origin)]);
  },

  /**
   * `canonical("iterm2-relay-delete", [0x01, challenge, utf8(room), utf8(origin)])`.
   * @param {Uint8Array} challenge
   * @param {string} room
   * @param {string} origin
   */
  delete(challenge, room, origin) {
    return canonical(RelayTranscript.deleteDomain, [Uint8Array.of(RelayTranscript.version), challenge, utf8(room), utf8(origin)]);
  },

  /**
   * `SHA256(canonical("iterm2-relay-attest", [challenge, utf8(origin)]))`.
   * @param {Uint8Array} challenge
   * @param {string} origin
   */
  attestClientDataHash(challenge, origin) {
    return sha256(canonical(RelayTranscript.attestDomain, [challenge, utf8(origin)]));
  },
});

export const RoomName = Object.freeze({
  domain: 'iterm2-room',
  /** Characters: a SHA-256 digest in hex. */
  length: 64,

  /**
   * The room of a pairing: lowercase hex of `SHA256(canonical("iterm2-room", [rs, utf8(pid)]))`,
   * `rs` the computer's static public key, `pid` the pairing id as the code spells it.
   * @param {Uint8Array} rs
   * @param {string} pid
   * @returns {string}
   */
  derive(rs, pid) {
    return toHex(sha256(canonical(RoomName.domain, [rs, utf8(pid)])));
  },

  /**
   * Exactly 64 lowercase hex digits, what the relay accepts (else HTTP 400 `bad room`).
   * @param {string} name
   */
  isValid(name) {
    return /^[0-9a-f]{64}$/.test(name);
  },
});

/** The DER prefix of a PKCS#8 PrivateKeyInfo for Ed25519 (RFC 8410 section 7): the 32-byte seed follows. */
const PKCS8_PREFIX = Uint8Array.of(
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20);
const ED25519 = 'Ed25519';
const ROOM_SECRET_SIZE = 32;
const INFO = 'relay-auth-ed25519';

/** @returns {SubtleCrypto} */
function subtle() {
  const api = globalThis.crypto && globalThis.crypto.subtle;
  if (!api) throw new Error('Ed25519: WebCrypto (crypto.subtle) is missing; browsers offer it only in a secure context');
  return api;
}

/**
 * The room's join key, derived by both paired sides from the 32-byte room secret: Ed25519 seed =
 * HKDF-SHA256(IKM = roomSecret, empty salt, info `relay-auth-ed25519`, 32 bytes). The relay keeps
 * only the verifier V (the raw public key) and checks join and delete signatures against it.
 */
export class RelayJoinKey {
  /**
   * @param {CryptoKey} signingKey non-extractable, usable for `sign`
   * @param {Uint8Array} verifier the raw 32-byte public key
   */
  constructor(signingKey, verifier) {
    /** @readonly */
    this.signingKey = signingKey;
    /** @readonly */
    this.verifier = verifier;
  }

  static info = INFO;
  static roomSecretSize = ROOM_SECRET_SIZE;

  /**
   * The Ed25519 seed of a room secret. It is secret: `fromRoomSecret` wipes its copy.
   * @param {Uint8Array} roomSecret 32 bytes
   * @returns {Uint8Array}
   */
  static seed(roomSecret) {
    if (!(roomSecret instanceof Uint8Array) || roomSecret.length !== ROOM_SECRET_SIZE) {
      throw new RangeError(`a room secret is ${ROOM_SECRET_SIZE} bytes`);
    }
    return hkdfSha256(roomSecret, utf8(INFO), 32);
  }

  /**
   * The join key of `roomSecret`: the private key imported non-extractable, its public half read
   * once from a short-lived extractable copy.
   * @param {Uint8Array} roomSecret
   * @returns {Promise<RelayJoinKey>}
   */
  static async fromRoomSecret(roomSecret) {
    const seed = RelayJoinKey.seed(roomSecret);
    const pkcs8 = concatBytes(PKCS8_PREFIX, seed);
    seed.fill(0);
    try {
      const api = subtle();
      const readable = await api.importKey('pkcs8', pkcs8, { name: ED25519 }, true, ['sign']);
      const jwk = await api.exportKey('jwk', readable);
      const verifier = fromBase64Url(/** @type {string} */ (jwk.x));
      const signingKey = await api.importKey('pkcs8', pkcs8, { name: ED25519 }, false, ['sign']);
      return new RelayJoinKey(signingKey, verifier);
    } finally {
      pkcs8.fill(0);
    }
  }

  /**
   * A fresh random room secret.
   * @returns {Uint8Array}
   */
  static makeRoomSecret() {
    return globalThis.crypto.getRandomValues(new Uint8Array(ROOM_SECRET_SIZE));
  }

  /**
   * @param {Uint8Array} message
   * @returns {Promise<Uint8Array>} the 64-byte signature
   */
  async sign(message) {
    return new Uint8Array(await subtle().sign({ name: ED25519 }, this.signingKey, message));
  }

  /**
   * The signature for an established room's join.
   * @param {RelayRole} role
   * @param {Uint8Array} nonce
   * @param {string} room
   * @param {string} origin
   */
  signJoin(role, nonce, room, origin) {
    return this.sign(RelayTranscript.join(role, nonce, room, origin));
  }

  /**
   * The signature for deleting the room.
   * @param {Uint8Array} challenge
   * @param {string} room
   * @param {string} origin
   */
  signDelete(challenge, room, origin) {
    return this.sign(RelayTranscript.delete(challenge, room, origin));
  }
}

/** A registration token nobody was given: 24 zero bytes (the room check). */
const NOBODY_S_TOKEN = new Uint8Array(24);

/** The JSON bodies of the relay's HTTP endpoints, byte for byte as the Swift device writes them. */
export const RelayRequests = Object.freeze({
  /**
   * `POST /register`: `{"registrationToken":"<b64>","verifier":"<b64>"}`.
   * @param {Uint8Array} registrationToken the phone admission's 24 bytes
   * @param {Uint8Array} verifier V
   */
  register(registrationToken, verifier) {
    return `{"registrationToken":"${RelayJSON.base64(registrationToken)}","verifier":"${RelayJSON.base64(verifier)}"}`;
  },

  /**
   * `/register` with V and a token nobody was given: `already registered` says the room still
   * has its verifier, `bad token` that it has none (RelayHTTPClient.roomIsEstablished).
   * @param {Uint8Array} verifier
   */
  roomCheck(verifier) {
    return RelayRequests.register(NOBODY_S_TOKEN, verifier);
  },

  /**
   * `POST /delete`: `{"challenge":"<b64>","signature":"<b64>"}`.
   * @param {Uint8Array} challenge from `/attest/challenge`
   * @param {Uint8Array} signature over the delete transcript
   */
  delete(challenge, signature) {
    return `{"challenge":"${RelayJSON.base64(challenge)}","signature":"${RelayJSON.base64(signature)}"}`;
  },
});
