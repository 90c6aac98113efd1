// The device's connection to its computer through the relay, in the browser: the thin shell
// that runs DeviceConnectionMachine (docs/companion.md "The session protocol"). The machine
// decides everything; this carries it out: each attempt (relay-road.js) on a socket of its own,
// the channel of the connection in use (its cipher states), a timer for `nextWake`. Sockets, the
// relay's HTTP side and the clock are given (relay-socket.js in a browser, an in-memory relay in
// the tests), so nothing here touches a WebSocket, fetch or the DOM. Inputs are handled one at a
// time, in order; what they cause (output written, screens drawn, events) goes to the callbacks
// given, in the machine's order. The twin of DeviceConnection.

import { DeviceConnectionMachine } from './device-connection-machine.js';
import { SocketInbox } from './frame-pipe.js';
import { connectRelayRoad, RoadAttemptError } from './relay-road.js';
import { RelayEndpoint } from './relay-endpoint.js';
import { RelayJoinKey } from './relay-join.js';
import { RelayClose } from './relay-protocol.js';
import { RoadFailure } from './road-failure.js';
import { ScrollbackLines } from './scrollback-lines.js';

/** @typedef {import('./device-connection-machine.js').DeviceInput} DeviceInput */
/** @typedef {import('./device-connection-machine.js').DeviceAction} DeviceAction */
/** @typedef {import('./device-connection-machine.js').DeviceEvent} DeviceEvent */
/** @typedef {import('./device-connection-machine.js').Termination} Termination */
/** @typedef {import('./device-connection-machine.js').Failure} Failure */
/** @typedef {import('./device-connection-machine.js').DeviceConnectionSettings} DeviceConnectionSettings */
/** @typedef {import('./device-session.js').Attach} Attach */
/** @typedef {import('./device-session.js').ScreenFrame} ScreenFrame */
/** @typedef {import('./relay-road.js').RelayPairing} RelayPairing */
/** @typedef {import('./relay-road.js').RoadConnection} RoadConnection */
/** @typedef {import('./frame-pipe.js').OpenRelaySocket} OpenRelaySocket */
/** @typedef {import('./frame-pipe.js').RelayHTTP} RelayHTTP */
/** @typedef {import('./frame-pipe.js').Clock} Clock */
/** @typedef {import('./x25519.js').KeyPair} KeyPair */

/**
 * @typedef {object} DeviceConnectionOptions
 * @property {DeviceConnectionSettings} settings what to attach, the size, the agents watch…
 * @property {RelayPairing} pairing
 * @property {string} deviceName the name it paired under
 * @property {KeyPair} staticKey the device's Noise static key
 * @property {RelayJoinKey} [joinKey] the room's join key, when kept (else derived from the room secret)
 * @property {OpenRelaySocket} openSocket
 * @property {RelayHTTP} http
 * @property {Clock} clock
 * @property {(event: DeviceEvent | {type: 'finished', termination: Termination}) => void} [onEvent] every event, in order; `finished` last
 * @property {(bytes: Uint8Array) => boolean} [onOutput] a session of bytes' output; false ends the session
 * @property {(frame: ScreenFrame) => boolean} [onScreen] a screen session's complete screen; false ends the session
 * @property {(scrollback: ScrollbackLines) => void} [onScrollback] the computer's answer to a scrollback request
 * @property {() => Promise<KeyPair>} [ephemeralForTestsOnly] a fixed ephemeral key for each attempt. **Insecure: tests only.**
 */

export class DeviceConnection {
  #options;
  #machine;
  /** @type {DeviceInput[]} */
  #inputs = [];
  #running = false;
  /** @type {(() => void) | null} */
  #cancelTimer = null;
  #timerAt = Infinity;
  /** @type {Map<number, SocketInbox>} attempts under way */
  #attempts = new Map();
  /** @type {Map<number, RoadConnection>} connections up that the machine has not adopted or closed */
  #arrived = new Map();
  /** @type {{id: number, connection: RoadConnection} | null} */
  #current = null;
  /** @type {Promise<RelayJoinKey> | null} */
  #joinKey = null;
  #finished = false;

  /** @param {DeviceConnectionOptions} options */
  constructor(options) {
    this.#options = options;
    this.#machine = new DeviceConnectionMachine(options.settings);
    if (options.joinKey !== undefined) this.#joinKey = Promise.resolve(options.joinKey);
  }

  /** The machine, for status lines and tests (do not feed it directly). */
  get machine() {
    return this.#machine;
  }

  get isFinished() {
    return this.#finished;
  }

  /** Starts connecting (once). */
  start() {
    this.#input({ type: 'start' });
  }

  /** @param {Uint8Array} bytes keystrokes for the session; sent as the frame budget allows */
  send(bytes) {
    if (bytes.length > 0) this.#input({ type: 'keys', bytes });
  }

  /** The end of input (the terminal's EOF character on the computer). */
  sendEOF() {
    this.#input({ type: 'endOfInput' });
  }

  /** @param {number} cols @param {number} rows the size, now and for every later resume */
  resize(cols, rows) {
    this.#input({ type: 'resize', cols, rows });
  }

  /**
   * The stream the session runs on over the connection in use: what a scrollback request names.
   * Null while it is not running on one (between connections, before it starts).
   * @returns {number | null}
   */
  get sessionStream() {
    return this.#machine.link?.stream ?? null;
  }

  /**
   * Asks for a screen session's scrolled-off lines (ScrollbackHistory says which); the answer
   * comes to `onScrollback`. Dropped when `stream` is no longer the session's: the answer would
   * never come, and the history gives the request up at the resume.
   * @param {{stream: number, end: bigint, count: number}} request
   */
  requestScrollback(request) {
    const { stream, end, count } = request;
    if (!Number.isInteger(count) || count < 1 || count > ScrollbackLines.maximumRequest) {
      throw new RangeError(`a request for ${count} scrollback lines`);
    }
    if (end < 0n || end > 0xffffffffffffffffn) throw new RangeError(`scrollback before line ${end}`);
    this.#input({ type: 'scrollbackRequest', stream, end, count });
  }

  /** @param {Attach} attach attached on this connection (and resumed on later ones) when nothing is yet */
  open(attach) {
    this.#input({ type: 'open', attach });
  }

  /** @param {boolean} watch start or stop the agents board on this connection and the later ones */
  watchAgents(watch) {
    this.#input({ type: 'watchAgents', watch });
  }

  /**
   * The page came back from the background, or the browser is online again: reconnect at once.
   * @param {string} reason in words ("the page came back from the background")
   */
  resumed(reason) {
    this.#input({ type: 'resumed', reason });
  }

  /** Ends the session: the computer is told to hang it up, and `finished` (cancelled) follows. */
  cancel() {
    this.#input({ type: 'stop', termination: { type: 'cancelled' } });
  }

  /** @param {Failure} failure ends it with what the caller found instead of `cancelled` */
  end(failure) {
    this.#input({ type: 'stop', termination: { type: 'failed', failure } });
  }

  /**
   * One input; inputs that come while one is handled wait their turn.
   * @param {DeviceInput} input
   */
  #input(input) {
    this.#inputs.push(input);
    if (this.#running) return;
    this.#running = true;
    try {
      while (this.#inputs.length > 0) {
        const next = /** @type {DeviceInput} */ (this.#inputs.shift());
        for (const action of this.#machine.handle(next, this.#options.clock.now())) this.#carryOut(action);
      }
    } finally {
      this.#running = false;
    }
    this.#plan();
  }

  /** The timer for the machine's next wake. */
  #plan() {
    const wake = this.#machine.nextWake ?? Infinity;
    if (wake === this.#timerAt) return;
    this.#cancelTimer?.();
    this.#cancelTimer = null;
    this.#timerAt = wake;
    if (!Number.isFinite(wake)) return;
    const clock = this.#options.clock;
    this.#cancelTimer = clock.setTimer(Math.max(0, wake - clock.now()), () => {
      this.#cancelTimer = null;
      this.#timerAt = Infinity;
      this.#input({ type: 'tick' });
    });
  }

  /** @param {DeviceAction} action */
  #carryOut(action) {
    const options = this.#options;
    switch (action.type) {
      case 'connect':
        return this.#startAttempt(action.id);
      case 'cancel': {
        const inbox = this.#attempts.get(action.id);
        if (inbox !== undefined) {
          inbox.interrupt('the attempt was called off');
          inbox.socket.abandon();
        }
        return;
      }
      case 'adopt':
        return this.#adopt(action.id);
      case 'close':
      case 'abandon': {
        const connection = this.#current?.id === action.id ? this.#current.connection : this.#arrived.get(action.id);
        if (connection === undefined) return;
        if (this.#current?.id === action.id) this.#current = null;
        this.#arrived.delete(action.id);
        connection.inbox.stop();
        if (action.type === 'close') connection.inbox.socket.close();
        else connection.inbox.socket.abandon();
        return;
      }
      case 'send':
        // A failed send means the connection is ending: its end comes as an event.
        try {
          this.#current?.connection.channel.send(action.bytes);
        } catch {
          // (the socket's close follows)
        }
        return;
      case 'write': {
        const written = options.onOutput?.(action.bytes) ?? true;
        this.#inputs.push(written ? { type: 'shown', count: action.bytes.length } : { type: 'outputFailed' });
        return;
      }
      case 'draw':
        if (options.onScreen?.(action.frame) === false) this.#inputs.push({ type: 'outputFailed' });
        return;
      case 'scrollback':
        options.onScrollback?.(action.scrollback);
        return;
      case 'emit':
        options.onEvent?.(action.event);
        return;
      case 'finish':
        this.#finished = true;
        this.#cancelTimer?.();
        this.#cancelTimer = null;
        options.onEvent?.({ type: 'finished', termination: action.termination });
        return;
    }
  }

  /** @param {number} id */
  #startAttempt(id) {
    const options = this.#options;
    const pairing = options.pairing;
    const inbox = new SocketInbox(options.openSocket(RelayEndpoint.webSocketURL(pairing.relay, pairing.room)));
    this.#attempts.set(id, inbox);
    this.#joinKey ??= RelayJoinKey.fromRoomSecret(pairing.roomSecret);
    const joinKey = this.#joinKey;
    (async () => {
      const ephemeral = options.ephemeralForTestsOnly === undefined ? undefined : await options.ephemeralForTestsOnly();
      return connectRelayRoad(inbox, {
        pairing, joinKey: await joinKey, deviceName: options.deviceName, staticKey: options.staticKey, http: options.http,
        clock: options.clock, ephemeralForTestsOnly: ephemeral,
      });
    })().then((connection) => {
      this.#attempts.delete(id);
      this.#arrived.set(id, connection);
      this.#input({ type: 'attemptEnded', id, result: {
        ok: true, arrival: { relay: pairing.relay.host, registeredNow: connection.registeredNow, servesScreenSessions: connection.served.get('screen') === 1 },
      } });
    }, (error) => {
      this.#attempts.delete(id);
      const failure = error instanceof RoadAttemptError ? error.failure
        : { kind: /** @type {const} */ ('unavailable'), why: error instanceof Error ? error.message : String(error) };
      this.#input({ type: 'attemptEnded', id, result: { ok: false, failure } });
    });
  }

  /** @param {number} id */
  #adopt(id) {
    const connection = this.#arrived.get(id);
    if (connection === undefined) return;
    this.#arrived.delete(id);
    this.#current = { id, connection };
    const { pairing, clock } = this.#options;
    connection.inbox.deliverTo((event) => {
      if (this.#current?.id !== id) return;
      switch (event.type) {
        case 'binary': {
          let message;
          try {
            message = connection.channel.receiveTransport(event.bytes);
          } catch (error) {
            // A frame that fails authentication: the path is broken; start over.
            connection.inbox.stop();
            connection.inbox.socket.abandon();
            const why = error instanceof Error ? error.message : String(error);
            return this.#input({ type: 'ended', id, failure: { kind: 'unavailable', why: `the connection ended (${why})` } });
          }
          return this.#input({ type: 'frame', id, messages: message === null ? [] : [message] });
        }
        case 'closed': {
          /** @type {import('./relay-link.js').FramePipeEnd} */
          const end = event.code === 1006 // a browser's: the connection went without a close from the relay
            ? { type: 'failed', message: `the connection to the relay was lost (${event.reason === '' ? 'close 1006' : event.reason})` }
            : { type: 'closedByRelay', close: RelayClose.make(event.code, event.reason) };
          return this.#input({ type: 'ended', id, failure: RoadFailure.ofEnd(end, pairing.relay.host, clock.unixTime()) });
        }
        default:
          return; // text frames are not spliced after admission
      }
    });
  }
}
