// The shell of DevicePairing (docs/companion.md "Pairing, step by step"): joins the code's room
// as the phone with `{}`, runs the initiator handshake on each connection, registers the room's
// verifier with the relay, feeds the machine and carries out its actions in order; between
// connections it reconnects as RelayLink does (at once after the computer left or a connection
// that lasted, else 0.5 s doubling to 30 s), and stops where retrying cannot help (another device
// took this one's place, a relay that wants App Attest). Sockets, the relay's HTTP side, the
// clock and where the pairing is kept are given. The browser pairs through the relay only. The
// twin of DevicePairingRunner.

import { DevicePairing } from './device-pairing.js';
import { SocketInbox } from './frame-pipe.js';
import { admit, RelayRegistration } from './relay-road.js';
import { RelayConnectionError, RelayLink } from './relay-link.js';
import { RelayBackoff } from './relay-backoff.js';
import { RelayEndpoint } from './relay-endpoint.js';
import { RelayJoinKey } from './relay-join.js';
import { RelayClose, AdmissionError } from './relay-protocol.js';
import { FramedChannel } from './framed-channel.js';
import { CompanionProfile } from './companion-profile.js';
import { CompanionMessage } from './companion-message.js';
import { ChannelMessage } from './channel-message.js';
import { printableText } from './printable-text.js';

/** @typedef {import('./companion-code.js').CompanionCode} CompanionCode */
/** @typedef {import('./device-pairing.js').DevicePairingOutcome} DevicePairingOutcome */
/** @typedef {import('./device-pairing.js').DevicePairingAction} DevicePairingAction */
/** @typedef {import('./device-pairing.js').DevicePairingEvent} DevicePairingEvent */
/** @typedef {import('./frame-pipe.js').OpenRelaySocket} OpenRelaySocket */
/** @typedef {import('./frame-pipe.js').RelayHTTP} RelayHTTP */
/** @typedef {import('./frame-pipe.js').Clock} Clock */
/** @typedef {import('./frame-pipe.js').RelaySocketEvent} RelaySocketEvent */
/** @typedef {import('./relay-link.js').Disposition} Disposition */
/** @typedef {import('./home-address.js').HomeAddress} HomeAddress */
/** @typedef {import('./x25519.js').KeyPair} KeyPair */

/**
 * Where the device shows the code and what happens. `showCode` gets the six digits and the line
 * to show (`Type this code on studio: 138 557`).
 * @typedef {{showCode(code: string, text: string): void, blankCode(reason: string): void, say(text: string): void}} PairingConsole
 */

/**
 * @typedef {object} DevicePairingRunnerOptions
 * @property {CompanionCode} code
 * @property {string} deviceName
 * @property {KeyPair} staticKey
 * @property {OpenRelaySocket} openSocket
 * @property {RelayHTTP} http
 * @property {Clock} clock
 * @property {PairingConsole} console
 * @property {(roomSecret: Uint8Array, registered: boolean, home: HomeAddress[]) => Promise<void>} keep keeps the pairing
 *   before what depends on it is sent (a rejection ends the pairing: nothing is paired)
 * @property {() => Promise<void>} forget removes what `keep` kept, when the pairing ends before the computer acknowledged it
 * @property {() => number} [random] uniform in 0…1, the backoff's jitter
 * @property {(count: number) => Uint8Array} [randomBytes] the room secret's source
 * @property {number} [timeout] seconds (180)
 * @property {() => Promise<KeyPair>} [ephemeralForTestsOnly] a fixed ephemeral key for each handshake. **Insecure: tests only.**
 */

/** The pairing's end: the machine's outcome, or `keepFailed` when the pairing could not be kept here. */
/** @typedef {DevicePairingOutcome | {type: 'keepFailed', reason: string}} PairingResult */

export class DevicePairingRunner {
  #options;
  #machine;
  #relay;
  /** @type {Promise<void>} every step, one after another */
  #work = Promise.resolve();
  /** @type {{inbox: SocketInbox, channel: FramedChannel | null, tag: number, admittedAt: number} | null} */
  #current = null;
  #tag = 0;
  #backoff = new RelayBackoff();
  #reshards = 0;
  /** @type {RelayJoinKey | null} the credential of later joins, once the relay may hold the verifier */
  #joinKey = null;
  /** @type {HomeAddress[]} */
  #home;
  #kept = false;
  #acknowledged = false;
  /** @type {(() => void) | null} */
  #cancelTimer = null;
  /** @type {((result: PairingResult) => void) | null} */
  #resolve = null;
  #done = false;
  /** @type {string | null} the last reason the relay could not be reached, while nothing ever answered */
  unreachableReason = null;

  /** @param {DevicePairingRunnerOptions} options */
  constructor(options) {
    this.#options = options;
    this.#relay = DevicePairing.relayOf(options.code);
    this.#home = options.code.home;
    this.#machine = new DevicePairing(options.deviceName, { timeout: options.timeout, random: options.randomBytes });
  }

  /** The computer's name as shown: printable, or the relay's host. */
  get computer() {
    const name = printableText(this.#options.code.computerName, 64);
    return name === '' ? this.#relay.host : name;
  }

  /**
   * Runs to the end.
   * @returns {Promise<PairingResult>}
   */
  run() {
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.#step(async () => {
        await this.#feed({ type: 'start', now: this.#options.clock.now() });
        this.#join();
      });
    });
  }

  /** Cancels (the person said so): the connection closes and nothing is kept. */
  cancel() {
    this.#step(() => this.#feed({ type: 'cancel' }));
  }

  /** @param {() => Promise<void> | void} body */
  #step(body) {
    this.#work = this.#work.then(async () => {
      if (!this.#done) await body();
    }).catch((error) => this.#end({ type: 'keepFailed', reason: error instanceof Error ? error.message : String(error) }));
  }

  /** @param {DevicePairingEvent} event */
  async #feed(event) {
    await this.#perform(this.#machine.handle(event));
    this.#plan();
  }

  /** The timer for the machine's time limit. */
  #plan() {
    this.#cancelTimer?.();
    this.#cancelTimer = null;
    const wake = this.#machine.nextWake;
    if (wake === null || this.#done) return;
    const clock = this.#options.clock;
    this.#cancelTimer = clock.setTimer(Math.max(0, wake - clock.now()), () => {
      this.#step(() => this.#feed({ type: 'tick', now: clock.now() }));
    });
  }

  /** A fresh connection to the room. */
  #join() {
    const options = this.#options;
    const tag = ++this.#tag;
    const inbox = new SocketInbox(options.openSocket(RelayEndpoint.webSocketURL(this.#relay, options.code.room)));
    const current = { inbox, channel: /** @type {FramedChannel | null} */ (null), tag, admittedAt: 0 };
    this.#current = current;
    admit(inbox, { role: 'phone', room: options.code.room, relay: this.#relay, joinKey: this.#joinKey, clock: options.clock }).then(
      (token) => this.#step(() => this.#admitted(current, token ?? new Uint8Array(0))),
      (error) => this.#step(() => this.#failedToJoin(current, error)));
  }

  /**
   * @param {{inbox: SocketInbox, channel: FramedChannel | null, tag: number, admittedAt: number}} current
   * @param {Uint8Array} token
   */
  async #admitted(current, token) {
    if (this.#current !== current) return current.inbox.socket.close();
    this.unreachableReason = null;
    const options = this.#options;
    current.admittedAt = options.clock.now();
    const ephemeral = options.ephemeralForTestsOnly === undefined ? undefined : await options.ephemeralForTestsOnly();
    const channel = new FramedChannel(current.inbox.socket, CompanionProfile.initiatorHandshake(CompanionProfile.herdrRemote, {
      pid: options.code.pidText, localStatic: options.staticKey, remoteStatic: options.code.staticPublicKey,
      insecureFixedEphemeralForTestsOnly: ephemeral,
    }));
    current.channel = channel;
    await this.#feed({ type: 'admitted', registrationToken: token });
    try {
      await channel.start();
    } catch {
      current.inbox.socket.close();
    }
    current.inbox.deliverTo((event) => this.#step(() => this.#received(current, event)));
  }

  /**
   * @param {{inbox: SocketInbox, channel: FramedChannel | null, tag: number, admittedAt: number}} current
   * @param {RelaySocketEvent} event
   */
  async #received(current, event) {
    if (this.#current !== current) return;
    const now = this.#options.clock.now();
    if (event.type === 'closed') return this.#ended(current, event);
    if (event.type !== 'binary' || current.channel === null) return;
    let outputs;
    try {
      outputs = await current.channel.receive(event.bytes);
    } catch (error) {
      return this.#drop(current, error instanceof Error ? error.message : String(error));
    }
    for (const output of outputs) {
      if (output.type === 'established') {
        await this.#feed({ type: 'established', handshakeHash: output.established.handshakeHash, now });
        continue;
      }
      let message;
      try {
        message = ChannelMessage.parse(output.message);
      } catch (error) {
        return this.#drop(current, `the computer sent ${error instanceof Error ? error.message : error}`);
      }
      if (message.type !== 'control') return this.#drop(current, 'the computer sent a session message while pairing');
      if (message.message.type === 'home') this.#home = message.message.addresses;
      await this.#feed({ type: 'message', message: message.message, now });
      if (this.#current !== current) return;
    }
  }

  /**
   * This side ends the connection (the computer broke the channel).
   * @param {{inbox: SocketInbox, channel: FramedChannel | null, tag: number, admittedAt: number}} current
   * @param {string} reason
   */
  async #drop(current, reason) {
    current.inbox.stop();
    current.inbox.socket.close();
    this.#current = null;
    await this.#feed({ type: 'connectionEnded', reason, now: this.#options.clock.now() });
    this.#next({ type: 'retry', reason }, false, 0);
  }

  /**
   * The admitted connection ended.
   * @param {{inbox: SocketInbox, channel: FramedChannel | null, tag: number, admittedAt: number}} current
   * @param {{code: number, reason: string, opened: boolean}} event
   */
  async #ended(current, event) {
    this.#current = null;
    const upFor = this.#options.clock.now() - current.admittedAt;
    this.#backoff.connectionEnded(upFor);
    const close = RelayClose.make(event.code, event.reason);
    /** @type {import('./relay-link.js').FramePipeEnd} */
    const end = event.code === 1006 ? { type: 'failed', message: `the connection was lost (${event.reason || 'close 1006'})` }
      : { type: 'closedByRelay', close };
    await this.#feed({ type: 'connectionEnded', reason: event.code === 1006 ? 'the connection was lost' : close.reason, now: this.#options.clock.now() });
    this.#next(RelayLink.afterEnd(end), RelayClose.equal(close, RelayClose.peerGone), upFor);
  }

  /**
   * An attempt that was not admitted.
   * @param {{inbox: SocketInbox, channel: FramedChannel | null, tag: number, admittedAt: number}} current
   * @param {unknown} error
   */
  #failedToJoin(current, error) {
    if (this.#current !== current) return;
    this.#current = null;
    current.inbox.socket.abandon();
    if (!(error instanceof RelayConnectionError)) throw error;
    this.#next(RelayLink.afterError(error), false, null, error);
  }

  /**
   * What comes after a connection or an attempt ended, as RelayLink decides it.
   * @param {Disposition} disposition
   * @param {boolean} peerLeft
   * @param {number | null} upFor seconds an admitted connection lasted (null: never admitted)
   * @param {RelayConnectionError} [error]
   */
  #next(disposition, peerLeft, upFor, error) {
    if (this.#done || this.#machine.isFinished) return;
    if (disposition.type !== 'retrySoon') this.#reshards = 0;
    const console = this.#options.console;
    if (disposition.type === 'stop') {
      const reason = disposition.reason;
      if (reason.type === 'refused' && reason.reason.includes(AdmissionError.ticketRequired)) {
        console.say('This relay requires App Attest before a device may pair (its ATTEST_REQUIRED is not false), which a ' +
          'browser cannot do. Pair through a relay that runs with ATTEST_REQUIRED=false.');
      } else if (reason.type === 'displaced') {
        console.say("Another device joined this pairing's room and took this device's place: someone else may be pairing " +
          'with this code. If that is not you, cancel on the computer.');
      } else {
        console.say(`The relay ended the pairing: ${RelayLink.stopText(reason)}.`);
      }
      return this.#step(() => this.#feed({ type: 'cancel' }));
    }
    const random = this.#options.random ?? Math.random;
    let delay;
    if (disposition.type === 'retrySoon') {
      this.#reshards += 1;
      delay = this.#reshards <= RelayLink.soonRetries ? RelayBackoff.soonDelay(random()) : this.#backoff.nextDelay(random());
    } else if (peerLeft) {
      // The computer left (it shows a new code, or parks again): be back at once.
      this.#backoff.reset();
      delay = 0;
    } else if (upFor !== null && upFor >= RelayBackoff.steadyConnection) {
      delay = 0;
    } else {
      delay = this.#backoff.nextDelay(random());
    }
    if (delay > 0) {
      const reason = disposition.reason;
      if (error?.serverError === AdmissionError.macOffline) {
        console.say('The computer is not in the pairing room yet; retrying (is herdr-host pair showing this code?)...');
      } else if (upFor === null) {
        this.unreachableReason = reason;
        console.say(`Cannot reach ${this.#relay.host} (${reason}); retrying in ${Math.max(1, Math.ceil(delay))} s...`);
      }
    }
    const rejoin = () => this.#step(() => this.#join());
    if (delay === 0) rejoin();
    else this.#options.clock.setTimer(delay, rejoin);
  }

  /** @param {DevicePairingAction[]} actions */
  async #perform(actions) {
    const options = this.#options;
    for (const action of actions) {
      switch (action.type) {
        case 'showCode':
          options.console.showCode(action.code, `Type this code on ${this.computer}: ${DevicePairing.codeText(action.code)}`);
          break;
        case 'blankCode':
          options.console.blankCode(action.reason);
          break;
        case 'say':
          options.console.say(action.text);
          break;
        case 'send':
          try {
            this.#current?.channel?.send(CompanionMessage.encode(action.message));
          } catch {
            this.#current?.inbox.socket.close();
          }
          break;
        case 'store':
          // Kept before the secret goes to the computer, so that nothing it has is lost here.
          try {
            await options.keep(action.roomSecret, action.registered, this.#home);
          } catch (error) {
            this.#current?.inbox.socket.close();
            return this.#end({ type: 'keepFailed', reason: error instanceof Error ? error.message : String(error) });
          }
          this.#kept = true;
          break;
        case 'register':
          this.#acknowledged = true;
          this.#register(action.registrationToken, action.roomSecret);
          break;
        case 'reconnect': {
          const current = this.#current;
          this.#current = null;
          current?.inbox.stop();
          current?.inbox.socket.close();
          this.#join();
          break;
        }
        case 'finished':
          this.#current?.inbox.stop();
          this.#current?.inbox.socket.close();
          return this.#end(action.outcome);
      }
    }
  }

  /**
   * `/register` with this connection's token and V; its answer goes to the machine.
   * @param {Uint8Array} token
   * @param {Uint8Array} roomSecret
   */
  #register(token, roomSecret) {
    const options = this.#options;
    RelayJoinKey.fromRoomSecret(roomSecret).then(async (key) => {
      // From here on the relay may hold the verifier, and then refuses an unsigned join: the next
      // attempt signs. A room still pairing admits a signed join too.
      this.#joinKey = key;
      await RelayRegistration.register(options.http, options.code.room, token, key.verifier);
      return /** @type {{failure: string | null, alreadyRegistered: boolean}} */ ({ failure: null, alreadyRegistered: false });
    }).catch((error) => ({
      failure: error instanceof Error ? error.message : String(error),
      alreadyRegistered: error instanceof RelayConnectionError && error.serverError === 'already registered',
    })).then((answer) => this.#step(() => this.#feed({ type: 'registration', ...answer })));
  }

  /** @param {PairingResult} result */
  async #end(result) {
    if (this.#done) return;
    this.#done = true;
    this.#cancelTimer?.();
    // Until the computer's ack the computer may not have the pairing: what was kept goes. After
    // it the pairing stays, to be finished (registered) at the next connection.
    if (result.type !== 'paired' && this.#kept && !this.#acknowledged) await this.#options.forget().catch(() => {});
    if (result.type === 'roomTaken' && this.#kept) await this.#options.forget().catch(() => {});
    this.#resolve?.(result);
  }
}
