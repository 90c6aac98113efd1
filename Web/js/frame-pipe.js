// What the device's I/O shells stand on, so that they run unchanged on a browser's WebSocket
// (relay-socket.js) and on the in-memory relay of the tests: a relay socket (one WebSocket to a
// room: text frames during admission, binary frames after it), its events queued in an inbox that
// an attempt reads one at a time and then hands to whoever adopts the connection, the relay's
// HTTP side, and a clock with timers. The twin of FramePipe and FramePipeEvent.

/**
 * One WebSocket to a relay room. `send` and `sendText` throw once it is closing or closed.
 * `close` ends it with the closing handshake (1000); `abandon` drops it at once, and nothing more
 * is delivered. Events go to the handler given to `listen` (those that came before it, first).
 * @typedef {object} RelaySocket
 * @property {(text: string) => void} sendText
 * @property {(bytes: Uint8Array) => void} send
 * @property {() => void} close
 * @property {() => void} abandon
 * @property {(handler: (event: RelaySocketEvent) => void) => void} listen
 */

/**
 * `closed` is the last event; `opened` false: the socket never opened (a browser says no more
 * than that: a refused upgrade, an unreachable host and a TLS failure are all a 1006 to it).
 * @typedef {{type: 'open'} | {type: 'text', text: string} | {type: 'binary', bytes: Uint8Array}
 *   | {type: 'closed', code: number, reason: string, opened: boolean}} RelaySocketEvent
 */

/** @typedef {(url: string) => RelaySocket} OpenRelaySocket a socket to this `wss://…/?room=…` address */

/**
 * The relay's HTTP side: a POST of a JSON body to `path` for `room`; the answer whatever its
 * status. Rejects only when nothing answered.
 * @typedef {{post(path: string, room: string, body: string): Promise<{status: number, text: string}>}} RelayHTTP
 */

/**
 * Seconds on a monotonic clock (`now`), Unix seconds (`unixTime`), and one-shot timers;
 * `setTimer` returns the function that cancels it.
 * @typedef {{now(): number, unixTime(): number, setTimer(seconds: number, fire: () => void): () => void}} Clock
 */

/**
 * A socket's events, queued: an attempt takes them one at a time (`next`), then the shell that
 * adopts the connection has the rest, and every later one, handed over (`deliverTo`).
 */
export class SocketInbox {
  /** @type {RelaySocketEvent[]} */
  #queue = [];
  /** @type {((event: RelaySocketEvent | null) => void) | null} */
  #waiter = null;
  /** @type {((event: RelaySocketEvent) => void) | null} */
  #handler = null;
  #ended = false;

  /** @param {RelaySocket} socket */
  constructor(socket) {
    /** @readonly */
    this.socket = socket;
    socket.listen((event) => this.#push(event));
  }

  /** Whether the socket's last event (`closed`) came. */
  get ended() {
    return this.#ended;
  }

  /** @param {RelaySocketEvent} event */
  #push(event) {
    if (this.#ended) return;
    if (event.type === 'closed') this.#ended = true;
    if (this.#handler !== null) return this.#handler(event);
    const waiter = this.#waiter;
    if (waiter !== null) {
      this.#waiter = null;
      return waiter(event);
    }
    this.#queue.push(event);
  }

  /**
   * The next event, or null when `deadline` (the clock's seconds) passes first.
   * @param {Clock} clock
   * @param {number} deadline
   * @returns {Promise<RelaySocketEvent | null>}
   */
  next(clock, deadline) {
    const queued = this.#queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#handler !== null || this.#waiter !== null) throw new Error('one reader of an inbox at a time');
    return new Promise((resolve) => {
      const cancel = clock.setTimer(Math.max(0, deadline - clock.now()), () => {
        this.#waiter = null;
        resolve(null);
      });
      this.#waiter = (event) => {
        cancel();
        resolve(event);
      };
    });
  }

  /**
   * From now on every event goes to `handler`, those queued first.
   * @param {(event: RelaySocketEvent) => void} handler
   */
  deliverTo(handler) {
    this.#handler = handler;
    while (this.#queue.length > 0 && this.#handler === handler) handler(/** @type {RelaySocketEvent} */ (this.#queue.shift()));
  }

  /**
   * Ends the inbox now with a `closed` of this side's (an attempt called off): a reader waiting
   * gets it, and nothing of the socket's is taken any more.
   * @param {string} reason
   */
  interrupt(reason) {
    this.#push({ type: 'closed', code: 1006, reason, opened: true });
  }

  /** Nothing more is handed on (a connection abandoned). */
  stop() {
    this.#handler = () => {};
    this.#queue = [];
  }
}
