// The device's side of a pairing through the relay (docs/companion.md "Pairing, step by step"):
// it joins the code's room as the phone, runs the handshake as initiator, shows the 6-digit code
// derived from it for the person to type on the computer, and blanks it the moment its
// connection drops. Only after the computer's `accepted` does it mint the room secret, and only
// after the computer acknowledged that secret does it register the room's verifier with the
// relay. It has its own time limit (180 s): no answer in time is a failure.
//
// A pure state machine with an injected clock (seconds) and randomness: the shell feeds it what
// happened and carries out the returned actions in order. A browser pairs through a relay only:
// a code for the home network alone is refused before this starts (`DevicePairing.relayOf`).
// The twin of DevicePairing.

import { RelayJoinKey } from './relay-join.js';
import { CompanionProfile } from './companion-profile.js';

/** @typedef {import('./companion-message.js').CompanionMessage} CompanionMessage */
/** @typedef {import('./companion-code.js').CompanionCode} CompanionCode */

/**
 * @typedef {{type: 'start', now: number}
 *   | {type: 'admitted', registrationToken: Uint8Array}
 *   | {type: 'established', handshakeHash: Uint8Array, now: number}
 *   | {type: 'message', message: CompanionMessage, now: number}
 *   | {type: 'connectionEnded', reason: string, now: number}
 *   | {type: 'registration', failure: string | null, alreadyRegistered: boolean}
 *   | {type: 'tick', now: number}
 *   | {type: 'cancel'}} DevicePairingEvent
 */

/**
 * - `paired`: the room secret, and whether the relay took the verifier (if not, the next
 *   connection registers it).
 * - `rejected`: the computer said no (a wrong code typed three times, or cancelled there).
 * - `roomTaken`: the relay already held a verifier for the room: someone registered it first.
 * @typedef {{type: 'paired', roomSecret: Uint8Array, established: boolean} | {type: 'rejected'} | {type: 'timedOut'}
 *   | {type: 'cancelled'} | {type: 'roomTaken'}} DevicePairingOutcome
 */

/**
 * - `showCode`: show this 6-digit code for the person to type on the computer.
 * - `blankCode`: take the code off the screen at once, and say why.
 * - `store`: keep the pairing (the room secret, whether registered) before what follows is sent.
 * - `register`: call `/register` with this connection's token and the verifier of the room secret.
 * - `reconnect`: close this connection and join again, for a fresh handshake.
 * - `finished`: the last action.
 * @typedef {{type: 'showCode', code: string} | {type: 'blankCode', reason: string} | {type: 'say', text: string}
 *   | {type: 'send', message: CompanionMessage} | {type: 'store', roomSecret: Uint8Array, registered: boolean}
 *   | {type: 'register', registrationToken: Uint8Array, roomSecret: Uint8Array} | {type: 'reconnect'}
 *   | {type: 'finished', outcome: DevicePairingOutcome}} DevicePairingAction
 */

/**
 * @typedef {{phase: 'idle'} | {phase: 'connecting', token: Uint8Array | null} | {phase: 'showing', token: Uint8Array}
 *   | {phase: 'awaitingAck', token: Uint8Array | null} | {phase: 'registering'} | {phase: 'done'}} Phase
 */

export class DevicePairing {
  /** Seconds from the start until the pairing is given up. */
  static timeout = 180;

  /** @type {Phase} */
  #phase = { phase: 'idle' };
  #deadline = Infinity;
  /** @type {(count: number) => Uint8Array} */
  #random;

  /**
   * @param {string} deviceName the name the device pairs under (1–64 printable characters)
   * @param {{timeout?: number, random?: (count: number) => Uint8Array, profile?: import('./companion-profile.js').CompanionProfileValue}} [options]
   */
  constructor(deviceName, options = {}) {
    /** @readonly */
    this.deviceName = deviceName;
    /** @readonly */
    this.timeout = options.timeout ?? DevicePairing.timeout;
    /** @readonly */
    this.profile = options.profile ?? CompanionProfile.herdrRemote;
    this.#random = options.random ?? ((count) => globalThis.crypto.getRandomValues(new Uint8Array(count)));
    /** @type {Uint8Array | null} Minted once the computer accepted. */
    this.roomSecret = null;
  }

  get isFinished() {
    return this.#phase.phase === 'done';
  }

  /** When to `tick` next (the time limit), or null when nothing waits on the clock. */
  get nextWake() {
    const phase = this.#phase.phase;
    return phase === 'done' || phase === 'registering' || phase === 'idle' ? null : this.#deadline;
  }

  /**
   * The code as a person reads it: `138 557`.
   * @param {string} code
   */
  static codeText(code) {
    return `${code.slice(0, 3)} ${code.slice(3)}`;
  }

  /**
   * The relay a browser pairs through; a code for the home network alone has none, and a browser
   * cannot take the home road (it opens no raw TCP). Throws a `RangeError` saying so.
   * @param {CompanionCode} code
   */
  static relayOf(code) {
    if (code.relay === null) {
      throw new RangeError('This code pairs on the home network alone (it names no relay), which a browser cannot reach: ' +
        'show a code with a relay on the computer (herdr-host pair --relay URL --web)');
    }
    return code.relay;
  }

  /**
   * @param {DevicePairingEvent} event
   * @returns {DevicePairingAction[]}
   */
  handle(event) {
    const phase = this.#phase;
    if (phase.phase === 'done') return [];
    if (phase.phase === 'idle') {
      if (event.type !== 'start') return [];
      this.#deadline = event.now + this.timeout;
      this.#phase = { phase: 'connecting', token: null };
      return [];
    }
    switch (event.type) {
      case 'cancel':
        return this.#finish({ type: 'cancelled' }, 'Cancelled; nothing was paired.');
      case 'tick':
        if (event.now < this.#deadline || phase.phase === 'registering') return [];
        return this.#finish({ type: 'timedOut' }, 'The computer did not confirm the code in time; nothing was paired.');
      case 'admitted':
        if (phase.phase === 'awaitingAck') this.#phase = { phase: 'awaitingAck', token: event.registrationToken };
        else if (phase.phase === 'connecting') this.#phase = { phase: 'connecting', token: event.registrationToken };
        return [];
      case 'established':
        if (phase.phase === 'connecting' && phase.token !== null) {
          const code = CompanionProfile.sas(this.profile, event.handshakeHash);
          this.#phase = { phase: 'showing', token: phase.token };
          return [{ type: 'showCode', code }];
        }
        if (phase.phase === 'awaitingAck' && phase.token !== null && this.roomSecret !== null) {
          // A reconnect after the computer accepted: no code; the status goes out again.
          return [{ type: 'send', message: this.#status(this.roomSecret) }];
        }
        return [];
      case 'message':
        return this.#message(event.message);
      case 'registration': {
        if (phase.phase !== 'registering' || this.roomSecret === null) return [];
        const roomSecret = this.roomSecret;
        this.#phase = { phase: 'done' };
        if (event.alreadyRegistered) {
          return [
            { type: 'say', text: "The relay already holds a verifier for this pairing's room: someone registered it first. " +
              'Nothing was kept; pair again with a new code.' },
            { type: 'finished', outcome: { type: 'roomTaken' } },
          ];
        }
        if (event.failure === null) {
          return [
            { type: 'send', message: { type: 'registered' } }, { type: 'store', roomSecret, registered: true },
            { type: 'finished', outcome: { type: 'paired', roomSecret, established: true } },
          ];
        }
        return [
          { type: 'say', text: `Paired, but the relay did not take the room yet (${event.failure}); it is registered at the next connection.` },
          { type: 'finished', outcome: { type: 'paired', roomSecret, established: false } },
        ];
      }
      case 'connectionEnded':
        if (phase.phase === 'showing') {
          this.#phase = { phase: 'connecting', token: null };
          return [
            { type: 'blankCode', reason: `The connection dropped (${event.reason}); that code is void. Reconnecting for a new one...` },
            { type: 'reconnect' },
          ];
        }
        if (phase.phase === 'connecting') this.#phase = { phase: 'connecting', token: null };
        if (phase.phase === 'awaitingAck') this.#phase = { phase: 'awaitingAck', token: null };
        return [];
      case 'start':
        return [];
    }
  }

  /**
   * @param {CompanionMessage} message
   * @returns {DevicePairingAction[]}
   */
  #message(message) {
    const phase = this.#phase;
    if (phase.phase === 'showing' && message.type === 'pairing') {
      if (!message.accepted) return this.#finish({ type: 'rejected' }, 'The computer rejected the pairing; nothing was paired.');
      const secret = this.#random(RelayJoinKey.roomSecretSize);
      this.roomSecret = secret;
      this.#phase = { phase: 'awaitingAck', token: phase.token };
      return [
        { type: 'blankCode', reason: 'The computer accepted the code.' }, { type: 'store', roomSecret: secret, registered: false },
        { type: 'send', message: this.#status(secret) },
      ];
    }
    if (phase.phase === 'awaitingAck' && message.type === 'statusAcknowledged' && phase.token !== null && this.roomSecret !== null) {
      this.#phase = { phase: 'registering' };
      return [{ type: 'register', registrationToken: phase.token, roomSecret: this.roomSecret }];
    }
    if (phase.phase === 'awaitingAck' && message.type === 'pairing' && !message.accepted) {
      return this.#finish({ type: 'rejected' }, null);
    }
    return [];
  }

  /**
   * @param {Uint8Array} roomSecret
   * @returns {CompanionMessage}
   */
  #status(roomSecret) {
    return { type: 'status', status: { name: this.deviceName, roomSecret, registered: false } };
  }

  /**
   * @param {DevicePairingOutcome} outcome
   * @param {string | null} blank
   * @returns {DevicePairingAction[]}
   */
  #finish(outcome, blank) {
    const showing = this.#phase.phase === 'showing';
    this.#phase = { phase: 'done' };
    /** @type {DevicePairingAction[]} */
    const actions = [];
    if (blank !== null) actions.push(showing ? { type: 'blankCode', reason: blank } : { type: 'say', text: blank });
    actions.push({ type: 'finished', outcome });
    return actions;
  }
}
