// herdr-host's side of the channel, played in JS from the web client's own modules for the
// shells' tests: it parks as `mac` in a room of the in-memory relay (fake-relay.js), answers the
// device's handshake as the Noise responder, and then either pairs (the 6-digit code typed by the
// test, `accepted`, the status kept, `home` and the ack, `registered`) or serves (the pinned
// device only; `serves`, the ack and `home` after its status; sessions of bytes and screen
// sessions opened and resumed, input counted, pings answered, the agents board). After the
// device leaves (`peer gone`) it parks again at once, as `herdr-host run` does. What the test
// wants beyond that it does through `onSession` and `send`.

import { SocketInbox } from '../js/frame-pipe.js';
import { admit } from '../js/relay-road.js';
import { RelayEndpoint } from '../js/relay-endpoint.js';
import { RelayJoinKey } from '../js/relay-join.js';
import { FramedChannel } from '../js/framed-channel.js';
import { CompanionProfile } from '../js/companion-profile.js';
import { CompanionMessage } from '../js/companion-message.js';
import { ChannelMessage } from '../js/channel-message.js';
import { SessionMessage } from '../js/session-message.js';
import { HomeAddress } from '../js/home-address.js';
import { constantTimeEqual, toHex } from '../js/bytes.js';

/** @typedef {import('../js/x25519.js').KeyPair} KeyPair */
/** @typedef {import('../js/frame-pipe.js').Clock} Clock */
/** @typedef {import('../js/session-message.js').SessionMessage} SessionMessageValue */
/** @typedef {import('../js/channel-message.js').ChannelMessage} ChannelMessageValue */
/** @typedef {import('./fake-relay.js').FakeRelay} FakeRelay */

/**
 * A session the computer keeps for the device.
 * @typedef {object} HostSession
 * @property {Uint8Array} token
 * @property {boolean} screen
 * @property {number} stream the stream it is attached on now
 * @property {bigint} inputReceived input bytes received in all
 * @property {string} input the input received, as text
 * @property {bigint} outputSent output bytes sent in all (a session of bytes)
 */

export class SimulatedComputer {
  /** @type {{inbox: SocketInbox, channel: FramedChannel | null} | null} */
  #connection = null;
  #tokens = 0;
  #stopped = false;
  /** @type {Promise<void>} */
  #work = Promise.resolve();

  /**
   * @param {{relay: FakeRelay, clock: Clock, staticKey: KeyPair, pid: string, room: string, origin?: string,
   *   mode: 'pairing' | 'run', deviceKey?: Uint8Array | null, roomSecret?: Uint8Array | null, home?: string[],
   *   ephemeral?: () => Promise<KeyPair>, servesScreens?: boolean, tokens?: Uint8Array[], window?: number}} options
   */
  constructor(options) {
    this.options = options;
    this.relay = options.relay;
    this.mode = options.mode;
    /**
     * The pinned device key.
     * @type {Uint8Array | null}
     */
    this.deviceKey = options.deviceKey ?? null;
    /** @type {Uint8Array | null} */
    this.roomSecret = options.roomSecret ?? null;
    /**
     * The 6-digit code of the pairing handshake under way.
     * @type {string | null}
     */
    this.code = null;
    /** @type {'none' | 'accepted' | 'stored' | 'registered' | 'rejected'} */
    this.pairing = 'none';
    /**
     * Every message from the device, parsed, in order.
     * @type {ChannelMessageValue[]}
     */
    this.received = [];
    /**
     * The sessions kept, by token (hex).
     * @type {Map<string, HostSession>}
     */
    this.sessions = new Map();
    /** Connections (parks) that got a device's handshake. */
    this.handshakes = 0;
    /**
     * What the test does with a session message before the default (returns true to skip it).
     * @type {((message: SessionMessageValue, computer: SimulatedComputer) => boolean) | null}
     */
    this.onSession = null;
    /** Parks that were admitted. */
    this.parks = 0;
  }

  /** Parks in the room (and again after each device leaves). */
  park() {
    if (this.#stopped) return;
    const { relay, clock, room } = this.options;
    const inbox = new SocketInbox(relay.openSocket(`wss://relay.example.com/?room=${room}`));
    const connection = { inbox, channel: /** @type {FramedChannel | null} */ (null) };
    this.#connection = connection;
    const joinKey = this.roomSecret !== null && this.pairing !== 'accepted' && this.mode === 'run'
      ? RelayJoinKey.fromRoomSecret(this.roomSecret) : Promise.resolve(null);
    joinKey.then((key) => admit(inbox, {
      role: 'mac', room, relay: RelayEndpoint.parse(this.options.origin ?? relay.origin), joinKey: key, clock,
    })).then(async () => {
      this.parks += 1;
      const ephemeral = this.options.ephemeral === undefined ? undefined : await this.options.ephemeral();
      connection.channel = new FramedChannel(inbox.socket, CompanionProfile.responderHandshake(CompanionProfile.herdrRemote, {
        pid: this.options.pid, localStatic: this.options.staticKey, insecureFixedEphemeralForTestsOnly: ephemeral,
      }));
      inbox.deliverTo((event) => {
        this.#work = this.#work.then(() => this.#event(connection, event)).catch(() => this.#drop(connection));
      });
    }, () => {
      if (this.#connection === connection) this.options.clock.setTimer(0.5, () => this.park());
    });
  }

  /** Stops parking; closes what is open. */
  stop() {
    this.#stopped = true;
    this.#connection?.inbox.socket.close();
  }

  /** The socket parked now (to make its path silent, or close it). */
  get socket() {
    return this.#connection?.inbox.socket ?? null;
  }

  /**
   * The person types `code` (spaces ignored); a match accepts the pairing and pins the key.
   * @param {string} code
   */
  typeCode(code) {
    const typed = code.replace(/ /g, '');
    if (this.code === null || typed !== this.code) return false;
    this.pairing = 'accepted';
    this.send({ type: 'control', message: { type: 'pairing', accepted: true } });
    return true;
  }

  /** @param {ChannelMessageValue} message one message to the device on the connection in use */
  send(message) {
    this.#connection?.channel?.send(ChannelMessage.encode(message));
  }

  /** @param {SessionMessageValue} message */
  sendSession(message) {
    this.send({ type: 'session', message });
  }

  /**
   * @param {{inbox: SocketInbox, channel: FramedChannel | null}} connection
   * @param {import('../js/frame-pipe.js').RelaySocketEvent} event
   */
  async #event(connection, event) {
    if (this.#connection !== connection || connection.channel === null) return;
    if (event.type === 'closed') {
      this.#connection = null;
      this.code = null; // the question is bound to this handshake
      // herdr-host parks again at once after a device leaves.
      if (!this.#stopped) this.options.clock.setTimer(0, () => this.park());
      return;
    }
    if (event.type !== 'binary') return;
    let channel = connection.channel;
    /** @type {import('../js/framed-channel.js').FramedChannelOutput[]} */
    let outputs;
    const wasEstablished = channel.isEstablished;
    try {
      outputs = await channel.receive(event.bytes);
    } catch (error) {
      // The relay spliced a new socket of the device's to this one: its handshake arrives on the
      // old channel, and herdr-host answers it at once, as a fresh channel on the same socket.
      if (this.mode !== 'run' || !wasEstablished) throw error;
      const fresh = new FramedChannel(connection.inbox.socket, CompanionProfile.responderHandshake(CompanionProfile.herdrRemote, {
        pid: this.options.pid, localStatic: this.options.staticKey,
      }));
      outputs = await fresh.receive(event.bytes);
      connection.channel = channel = fresh;
      this.resplices += 1;
    }
    for (const output of outputs) {
      if (output.type === 'established') {
        this.handshakes += 1;
        const key = /** @type {Uint8Array} */ (output.established.remoteStaticPublicKey);
        if (this.deviceKey !== null && !constantTimeEqual(key, this.deviceKey)) throw new Error('not the pinned device');
        if (this.mode === 'pairing' && this.pairing === 'none') this.code = CompanionProfile.sas(CompanionProfile.herdrRemote, output.established.handshakeHash);
        if (this.mode === 'pairing' && this.deviceKey === null) this.pendingKey = key;
        continue;
      }
      const message = ChannelMessage.parse(output.message);
      this.received.push(message);
      this.#message(message);
    }
  }

  /** @type {Uint8Array | null} */
  pendingKey = null;

  /** Handshakes answered on a socket whose old channel was up (a device's new socket spliced to it). */
  resplices = 0;

  /** @param {ChannelMessageValue} message */
  #message(message) {
    if (message.type === 'control') {
      const control = message.message;
      switch (control.type) {
        case 'status':
          if (this.mode === 'pairing' && this.pairing !== 'accepted' && this.pairing !== 'stored') throw new Error('a status before the code matched');
          if (this.mode === 'pairing') {
            this.deviceKey = this.pendingKey;
            this.pairing = 'stored';
          }
          this.roomSecret = control.status.roomSecret;
          if (this.mode === 'run' && this.options.servesScreens !== false) {
            this.send({ type: 'control', message: { type: 'serves', served: new Map([['screen', 1]]) } });
          }
          if (this.mode === 'pairing') this.send({ type: 'control', message: { type: 'home', addresses: this.#home() } });
          this.send({ type: 'control', message: { type: 'statusAcknowledged' } });
          if (this.mode === 'run') this.send({ type: 'control', message: { type: 'home', addresses: this.#home() } });
          return;
        case 'registered':
          this.pairing = 'registered';
          return;
        case 'ping':
          this.send({ type: 'control', message: { type: 'pong', number: control.number } });
          return;
        default:
          return;
      }
    }
    if (message.type !== 'session') return;
    const session = message.message;
    if (this.onSession?.(session, this) === true) return;
    const window = this.options.window ?? 4 * 1024 * 1024;
    switch (session.type) {
      case 'open':
      case 'openAgent': {
        const kept = this.#keep(session.stream, false);
        this.sendSession({ type: 'started', stream: session.stream, token: kept.token, offset: 0n, window: Math.min(window, session.window) });
        return;
      }
      case 'openScreen': {
        const kept = this.#keep(session.stream, true);
        this.sendSession({ type: 'screenStarted', stream: session.stream, token: kept.token, inputReceived: 0n });
        return;
      }
      case 'resume':
      case 'resumeScreen': {
        const kept = this.sessions.get(toHex(session.token));
        if (kept === undefined) {
          this.sendSession({ type: 'refused', stream: session.stream, reason: 'unknownSession', text: 'that session is not here (herdr-host restarted)' });
          return;
        }
        kept.stream = session.stream;
        if (session.type === 'resume') {
          this.send({ type: 'control', message: { type: 'inputReceived', stream: session.stream, bytes: kept.inputReceived } });
          this.sendSession({ type: 'started', stream: session.stream, token: kept.token, offset: session.received, window: Math.min(window, session.window) });
        } else {
          this.sendSession({ type: 'screenStarted', stream: session.stream, token: kept.token, inputReceived: kept.inputReceived });
        }
        return;
      }
      case 'input': {
        const kept = this.#byStream(session.stream);
        if (kept !== null) {
          kept.inputReceived += BigInt(session.data.length);
          kept.input += new TextDecoder().decode(session.data);
        }
        return;
      }
      default:
        return;
    }
  }

  /**
   * The session attached on `stream` now.
   * @param {number} stream
   * @returns {HostSession | null}
   */
  #byStream(stream) {
    for (const session of this.sessions.values()) if (session.stream === stream) return session;
    return null;
  }

  /** @param {number} stream */
  sessionOn(stream) {
    return this.#byStream(stream);
  }

  /**
   * A new session on `stream`, with the next token (the given ones first).
   * @param {number} stream
   * @param {boolean} screen
   * @returns {HostSession}
   */
  #keep(stream, screen) {
    const given = this.options.tokens?.[this.#tokens];
    const token = given ?? crypto.getRandomValues(new Uint8Array(16));
    this.#tokens += 1;
    const session = { token, screen, stream, inputReceived: 0n, input: '', outputSent: 0n };
    this.sessions.set(toHex(token), session);
    return session;
  }

  #home() {
    return (this.options.home ?? []).map((text) => HomeAddress.parse(text));
  }

  /** @param {{inbox: SocketInbox, channel: FramedChannel | null}} connection */
  #drop(connection) {
    connection.inbox.stop();
    connection.inbox.socket.close();
    if (this.#connection === connection) {
      this.#connection = null;
      if (!this.#stopped) this.options.clock.setTimer(0, () => this.park());
    }
  }
}

export { SessionMessage, CompanionMessage };
