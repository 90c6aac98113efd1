// A paired device's way to its computer through the relay, one attempt (docs/companion.md
// "Admission", "After pairing"; specs/002 "Reconnection"): the socket to the room, the admission
// as the phone (Hello, Challenge, a signed Proof, Result), a fresh XK handshake with the pinned
// computer key, the status with the room secret first (so a pairing that dropped half-way heals),
// the computer's ack and what it serves, and, while the room is not registered yet, the
// registration. What it gives is a channel ready for the session protocol; the connection's
// frames after the ack wait in its inbox for whoever adopts it. Also the admission alone and the
// registration, which the pairing shares. The twins of RelayRoad, greet (Greeting.swift),
// RelayConnection's admission and RelayHTTPClient's `register` and `roomIsEstablished`.

import { RelayAdmission, RelayClose, AdmissionError, RelayLimits } from './relay-protocol.js';
import { RelayConnectionError } from './relay-link.js';
import { RelayRequests } from './relay-join.js';
import { RoadFailure } from './road-failure.js';
import { FramedChannel } from './framed-channel.js';
import { CompanionProfile } from './companion-profile.js';
import { CompanionMessage } from './companion-message.js';
import { ChannelMessage } from './channel-message.js';
import { RelayJSON } from './relay-json.js';
import { utf8 } from './bytes.js';

/** @typedef {import('./frame-pipe.js').SocketInbox} SocketInbox */
/** @typedef {import('./frame-pipe.js').Clock} Clock */
/** @typedef {import('./frame-pipe.js').RelayHTTP} RelayHTTP */
/** @typedef {import('./frame-pipe.js').RelaySocketEvent} RelaySocketEvent */
/** @typedef {import('./relay-join.js').RelayJoinKey} RelayJoinKey */
/** @typedef {import('./relay-join.js').RelayRole} RelayRole */
/** @typedef {import('./relay-endpoint.js').RelayEndpoint} RelayEndpoint */
/** @typedef {import('./x25519.js').KeyPair} KeyPair */
/** @typedef {import('./road-failure.js').RoadFailure} RoadFailureValue */

/** An attempt that gave no channel: `failure` says what it means for retrying. */
export class RoadAttemptError extends Error {
  /** @param {RoadFailureValue} failure */
  constructor(failure) {
    super(RoadFailure.describe(failure));
    this.name = 'RoadAttemptError';
    /** @readonly */
    this.failure = failure;
  }
}

/**
 * What the device keeps about its computer and needs for an attempt.
 * @typedef {object} RelayPairing
 * @property {RelayEndpoint} relay
 * @property {string} room
 * @property {Uint8Array} computerKey the pinned `rs`
 * @property {string} pairingID the `pid` as the code spelled it
 * @property {Uint8Array} roomSecret
 * @property {boolean} registered
 */

/**
 * A connection with its channel up and the status acknowledged.
 * @typedef {object} RoadConnection
 * @property {FramedChannel} channel
 * @property {SocketInbox} inbox its frames after the ack wait here
 * @property {boolean} registeredNow this connection registered the room (keep `registered`)
 * @property {Map<string, number>} served what the computer serves beyond sessions of bytes, by version
 */

/** Seconds for the socket to open, for the admission, and for the handshake and status exchange. */
export const RelayRoadTimeouts = Object.freeze({ connect: 10, admission: RelayLimits.admissionTimeout, greeting: 15 });

/**
 * The next text frame of the admission; fails on a close, a binary frame or the deadline.
 * @param {SocketInbox} inbox
 * @param {Clock} clock
 * @param {number} deadline
 * @param {string} what
 */
async function admissionText(inbox, clock, deadline, what) {
  const event = await inbox.next(clock, deadline);
  if (event === null) throw new RelayConnectionError('timedOut', `the relay did not send ${what} in time`);
  switch (event.type) {
    case 'text': return event.text;
    case 'binary': throw new RelayConnectionError('protocolViolation', `the relay sent a binary frame instead of ${what}`);
    case 'open': throw new RelayConnectionError('protocolViolation', 'the socket opened twice');
    case 'closed': {
      const close = RelayClose.make(event.code, event.reason);
      throw new RelayConnectionError('closed', `relay closed the connection before ${what}: ${RelayClose.text(close)}`, { close });
    }
  }
}

/**
 * Opens and admits `inbox`'s socket into its room: Hello, Challenge, Proof (`{}`, or the join
 * key's signature over the join transcript), Result. The phone's registration token, or null.
 * Throws a RelayConnectionError.
 * @param {SocketInbox} inbox
 * @param {{role: RelayRole, room: string, relay: RelayEndpoint, joinKey: RelayJoinKey | null, clock: Clock}} options
 * @returns {Promise<Uint8Array | null>}
 */
export async function admit(inbox, options) {
  const { clock, relay } = options;
  const opened = await inbox.next(clock, clock.now() + RelayRoadTimeouts.connect);
  if (opened === null) throw new RelayConnectionError('timedOut', `the WebSocket to ${relay.authority} did not open in time`);
  if (opened.type === 'closed') {
    if (opened.opened) {
      const close = RelayClose.make(opened.code, opened.reason);
      throw new RelayConnectionError('closed', `relay closed the connection: ${RelayClose.text(close)}`, { close });
    }
    throw new RelayConnectionError('connectionLost',
      `cannot reach the relay ${relay.authority} (the WebSocket did not open: close ${opened.code}${opened.reason === '' ? '' : ` ${opened.reason}`})`);
  }
  if (opened.type !== 'open') throw new RelayConnectionError('protocolViolation', 'the relay spoke before the socket opened');
  const deadline = clock.now() + RelayRoadTimeouts.admission;
  inbox.socket.sendText(RelayAdmission.hello(options.role));
  const challengeText = await admissionText(inbox, clock, deadline, 'the challenge');
  const nonce = RelayAdmission.challengeNonce(challengeText);
  if (nonce === null) {
    throw new RelayConnectionError('protocolViolation', `the relay's challenge is not {"nonce":<32 bytes>}: ${challengeText.slice(0, 200)}`);
  }
  const proof = options.joinKey === null ? RelayAdmission.proof({ type: 'empty' })
    : RelayAdmission.proof({ type: 'signature', signature: await options.joinKey.signJoin(options.role, nonce, options.room, relay.origin) });
  inbox.socket.sendText(proof);
  const resultText = await admissionText(inbox, clock, deadline, 'the admission result');
  const result = RelayAdmission.result(resultText);
  if (result === null) {
    throw new RelayConnectionError('protocolViolation', `the relay's admission result is not {"ok":…}: ${resultText.slice(0, 200)}`);
  }
  if (result.type === 'refused') {
    // The relay closes with the same reason (1008) after a refusal.
    throw new RelayConnectionError('refused', `relay refused admission as ${options.role}: ${result.error}`,
      { serverError: result.error, close: RelayClose.refused(result.error) });
  }
  const token = result.registrationToken;
  if (options.role === 'phone' && token !== null && token.length !== RelayLimits.tokenSize) {
    throw new RelayConnectionError('protocolViolation', `the registration token is ${token.length} bytes, not ${RelayLimits.tokenSize}`);
  }
  return token;
}

/**
 * The relay's `error` of a JSON answer, or a short plain-text body (RelayHTTPResponse.errorText).
 * @param {string} text
 * @returns {string | null}
 */
function errorText(text) {
  const object = RelayJSON.object(utf8(text));
  if (object !== null) return typeof object.error === 'string' ? object.error : null;
  const line = text.trim();
  return line === '' || line.length > 200 || /[\r\n]/.test(line) ? null : line;
}

export const RelayRegistration = Object.freeze({
  errorText,

  /**
   * `POST /register`: uploads V with the registration token of a phone's admission. Throws a
   * RelayConnectionError (`httpStatus`, with the relay's words) unless the relay took it.
   * @param {RelayHTTP} http
   * @param {string} room
   * @param {Uint8Array} registrationToken
   * @param {Uint8Array} verifier
   */
  async register(http, room, registrationToken, verifier) {
    let answer;
    try {
      answer = await http.post('/register', room, RelayRequests.register(registrationToken, verifier));
    } catch (error) {
      throw new RelayConnectionError('connectionLost', `relay unreachable for /register (${error instanceof Error ? error.message : error})`);
    }
    const object = RelayJSON.object(utf8(answer.text));
    if (answer.status === 200 && object !== null && RelayJSON.boolean(object.ok) === true) return;
    if (answer.status === 200) {
      throw new RelayConnectionError('protocolViolation', 'relay answered /register with 200 but not {"ok":true}', { status: 200 });
    }
    const words = errorText(answer.text);
    throw new RelayConnectionError('httpStatus', `relay refused /register: ${answer.status} ${words ?? ''}`.trimEnd(),
      { status: answer.status, serverError: words });
  },

  /**
   * Whether the room has a verifier, asked without changing anything: `/register` with V and a
   * token nobody was given (`already registered`: yes; `bad token`: no). A device asks when its
   * computer seems away, since in open mode a room with no verifier admits any join.
   * @param {RelayHTTP} http
   * @param {string} room
   * @param {Uint8Array} verifier
   * @returns {Promise<boolean>}
   */
  async roomIsEstablished(http, room, verifier) {
    const answer = await http.post('/register', room, RelayRequests.roomCheck(verifier));
    const words = errorText(answer.text);
    if (answer.status === 403 && words === 'already registered') return true;
    if (answer.status === 403 && words === 'bad token') return false;
    throw new RelayConnectionError('httpStatus', `relay answered the room check with ${answer.status} ${words ?? ''}`.trimEnd(),
      { status: answer.status, serverError: words });
  },
});

/**
 * The device's first steps on an admitted socket: a fresh XK handshake with the pinned computer
 * key, the status, the computer's ack, and what it serves (`{"serves"}` before the ack). Throws a
 * RoadAttemptError.
 * @param {SocketInbox} inbox
 * @param {{pairing: RelayPairing, deviceName: string, staticKey: KeyPair, clock: Clock, ephemeralForTestsOnly?: KeyPair}} options
 * @returns {Promise<{channel: FramedChannel, served: Map<string, number>}>}
 */
async function greet(inbox, options) {
  const { pairing, clock } = options;
  /** @param {RoadFailureValue} failure */
  const fail = (failure) => new RoadAttemptError(failure);
  const channel = new FramedChannel(inbox.socket, CompanionProfile.initiatorHandshake(CompanionProfile.herdrRemote, {
    pid: pairing.pairingID, localStatic: options.staticKey, remoteStatic: pairing.computerKey,
    insecureFixedEphemeralForTestsOnly: options.ephemeralForTestsOnly,
  }));
  const deadline = clock.now() + RelayRoadTimeouts.greeting;
  /** @returns {Promise<import('./framed-channel.js').FramedChannelOutput[]>} */
  const next = async () => {
    for (;;) {
      const event = await inbox.next(clock, deadline);
      if (event === null) throw fail({ kind: 'unavailable', why: 'the computer did not answer in time' });
      if (event.type === 'closed') {
        throw fail(RoadFailure.ofEnd({ type: 'closedByRelay', close: RelayClose.make(event.code, event.reason) }, pairing.relay.host, clock.unixTime()));
      }
      if (event.type !== 'binary') continue; // nothing but binary is spliced after admission
      try {
        return await channel.receive(event.bytes);
      } catch (error) {
        throw fail({ kind: 'unavailable', why: error instanceof Error ? error.message : String(error) });
      }
    }
  };
  try {
    await channel.start();
  } catch (error) {
    throw fail({ kind: 'unavailable', why: error instanceof Error ? error.message : String(error) });
  }
  while (!channel.isEstablished) await next();
  const status = { name: options.deviceName, roomSecret: pairing.roomSecret, registered: pairing.registered };
  try {
    channel.send(CompanionMessage.encode({ type: 'status', status }));
  } catch (error) {
    throw fail({ kind: 'unavailable', why: error instanceof Error ? error.message : String(error) });
  }
  /** @type {Map<string, number>} */
  let served = new Map();
  for (let acknowledged = false; !acknowledged;) {
    for (const output of await next()) {
      if (output.type !== 'message') continue;
      let message;
      try {
        message = ChannelMessage.parse(output.message);
      } catch (error) {
        throw fail({ kind: 'unavailable', why: `the computer sent ${error instanceof Error ? error.message : error}` });
      }
      if (message.type !== 'control') {
        throw fail({ kind: 'unavailable', why: 'the computer sent a session message before it acknowledged the status' });
      }
      if (message.message.type === 'statusAcknowledged') acknowledged = true;
      if (message.message.type === 'serves') served = message.message.served;
    }
  }
  return { channel, served };
}

/**
 * One attempt through the relay on `inbox`'s socket (just made, not opened yet): admitted with
 * the join key's signature, greeted, registered if the room is not yet. Throws a RoadAttemptError.
 * @param {SocketInbox} inbox
 * @param {{pairing: RelayPairing, joinKey: RelayJoinKey, deviceName: string, staticKey: KeyPair, http: RelayHTTP, clock: Clock,
 *   ephemeralForTestsOnly?: KeyPair}} options
 * @returns {Promise<RoadConnection>}
 */
export async function connectRelayRoad(inbox, options) {
  const { pairing, clock, http } = options;
  const relay = pairing.relay;
  let token;
  try {
    token = await admit(inbox, { role: 'phone', room: pairing.room, relay, joinKey: options.joinKey, clock });
  } catch (error) {
    inbox.socket.abandon();
    if (!(error instanceof RelayConnectionError)) throw error;
    // In open mode a deleted or expired room admits any join, so its loss shows only as
    // `mac offline`: ask the relay whether the room still has its verifier.
    if (error.serverError === AdmissionError.macOffline && pairing.registered) {
      const established = await RelayRegistration.roomIsEstablished(http, pairing.room, options.joinKey.verifier).catch(() => null);
      if (established === false) throw new RoadAttemptError({ kind: 'pairingGone', why: 'the relay no longer holds the room' });
    }
    throw new RoadAttemptError(RoadFailure.ofError(error, relay.host, clock.unixTime()));
  }
  try {
    const { channel, served } = await greet(inbox, options);
    let registeredNow = false;
    if (!pairing.registered) {
      try {
        await RelayRegistration.register(http, pairing.room, token ?? new Uint8Array(0), options.joinKey.verifier);
        registeredNow = true;
      } catch (error) {
        // The room was registered by an earlier connection whose answer was lost: the signed
        // join above already proved this key is the room's.
        registeredNow = error instanceof RelayConnectionError && error.serverError === 'already registered';
      }
      if (registeredNow) channel.send(CompanionMessage.encode({ type: 'registered' }));
    }
    return { channel, inbox, registeredNow, served };
  } catch (error) {
    inbox.socket.close();
    if (error instanceof RoadAttemptError) throw error;
    throw new RoadAttemptError({ kind: 'unavailable', why: error instanceof Error ? error.message : String(error) });
  }
}
