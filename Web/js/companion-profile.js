// What names the app inside the companion cryptography (docs/companion.md "The code",
// interop-facts §5): the Noise prologue `"<app>/v1/pid:" + pid` and the 6-digit code's label
// `<label>-sas-v1`, and the handshake every companion connection runs,
// `Noise_XK_25519_ChaChaPoly_BLAKE2s` with the phone (the device) as initiator. Two apps with
// different profiles never complete a handshake with each other and never show matching codes.
// The twin of CompanionProfile.

import { HandshakeState } from './noise.js';
import { XK } from './handshake-pattern.js';
import { hkdfSha256 } from './hkdf.js';
import { utf8 } from './bytes.js';

/** @typedef {import('./x25519.js').KeyPair} KeyPair */

/**
 * @typedef {object} CompanionProfileValue
 * @property {string} prologueApp `<app>` in the prologue
 * @property {string} sasLabel `<label>` in the SAS info
 */

/**
 * @param {string} prologueApp
 * @param {string} sasLabel
 * @returns {CompanionProfileValue}
 */
const make = (prologueApp, sasLabel) => Object.freeze({ prologueApp, sasLabel });

export const CompanionProfile = Object.freeze({
  /** Ours. */
  herdrRemote: make('herdr-remote', 'herdr-remote'),
  /** iTerm2's companion: prologue app `iterm2-companion`, SAS label `iterm2`. */
  iTerm2: make('iterm2-companion', 'iterm2'),
  /** The protocol every companion handshake runs. */
  protocolName: HandshakeState.protocolNameFor(XK),

  /**
   * The prologue binding the pairing id: `"<app>/v1/pid:" + pid`, UTF-8.
   * @param {CompanionProfileValue} profile
   * @param {string} pid
   */
  prologue(profile, pid) {
    return utf8(`${profile.prologueApp}/v1/pid:${pid}`);
  },

  /**
   * The 6-digit code of a finished handshake: HKDF-SHA256(IKM = handshake hash, empty salt,
   * info `<label>-sas-v1`, 8 bytes) read as a big-endian u64, mod 10^6, zero-padded.
   * @param {CompanionProfileValue} profile
   * @param {Uint8Array} handshakeHash
   * @returns {string}
   */
  sas(profile, handshakeHash) {
    const bytes = hkdfSha256(handshakeHash, utf8(`${profile.sasLabel}-sas-v1`), 8);
    const value = new DataView(bytes.buffer).getBigUint64(0) % 1000000n;
    return value.toString().padStart(6, '0');
  },

  /**
   * The device's (initiator's) handshake: it knows the computer's static key `rs` from the code.
   * @param {CompanionProfileValue} profile
   * @param {{pid: string, localStatic: KeyPair, remoteStatic: Uint8Array, insecureFixedEphemeralForTestsOnly?: KeyPair}} keys
   */
  initiatorHandshake(profile, keys) {
    return new HandshakeState({
      pattern: XK, initiator: true, prologue: CompanionProfile.prologue(profile, keys.pid), s: keys.localStatic,
      rs: keys.remoteStatic, insecureFixedEphemeralForTestsOnly: keys.insecureFixedEphemeralForTestsOnly,
    });
  },

  /**
   * The computer's (responder's) handshake: it learns the device's static key from message 3.
   * @param {CompanionProfileValue} profile
   * @param {{pid: string, localStatic: KeyPair, insecureFixedEphemeralForTestsOnly?: KeyPair}} keys
   */
  responderHandshake(profile, keys) {
    return new HandshakeState({
      pattern: XK, initiator: false, prologue: CompanionProfile.prologue(profile, keys.pid), s: keys.localStatic,
      insecureFixedEphemeralForTestsOnly: keys.insecureFixedEphemeralForTestsOnly,
    });
  },
});
