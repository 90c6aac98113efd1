// The browser's side of frame-pipe.js: a relay socket over a WHATWG WebSocket (binary frames as
// ArrayBuffers), the relay's HTTP side over fetch, and the page's clock. The socket goes to
// `wss://<relay authority>/?room=<64 lowercase hex>` (RelayEndpoint.webSocketURL): a browser
// cannot send the `x-relay-room` header, and herdr-relay serving the web client (`--web-client`)
// takes the room from the URL for a page of its own origin. fetch sends `x-relay-room` itself (a
// request to the page's own origin needs no CORS preflight for it). A browser also sends `Origin`
// and its own User-Agent; the relay's web-client mode admits exactly one `Origin`, its own
// (docs/relay.md "The web client"), so a page reaches only the relay that served it: a code that
// names another relay must be opened at that relay's address. Kept tiny; tested in a real browser.

/** @typedef {import('./frame-pipe.js').RelaySocket} RelaySocket */
/** @typedef {import('./frame-pipe.js').RelaySocketEvent} RelaySocketEvent */
/** @typedef {import('./frame-pipe.js').RelayHTTP} RelayHTTP */
/** @typedef {import('./frame-pipe.js').Clock} Clock */

/** Bytes the browser may hold unsent before a send is refused (the relay is not taking frames). */
const MAXIMUM_BUFFERED = 4 * 1024 * 1024;

/**
 * A relay socket to `url`.
 * @param {string} url
 * @returns {RelaySocket}
 */
export function openRelaySocket(url) {
  const socket = new WebSocket(url);
  socket.binaryType = 'arraybuffer';
  /** @type {((event: RelaySocketEvent) => void) | null} */
  let handler = null;
  /** @type {RelaySocketEvent[]} */
  const queue = [];
  let opened = false;
  /** @param {RelaySocketEvent} event */
  const push = (event) => (handler === null ? queue.push(event) : handler(event));
  socket.onopen = () => {
    opened = true;
    push({ type: 'open' });
  };
  socket.onmessage = (event) => {
    if (typeof event.data === 'string') push({ type: 'text', text: event.data });
    else push({ type: 'binary', bytes: new Uint8Array(/** @type {ArrayBuffer} */ (event.data)) });
  };
  // An error is always followed by a close, which says what there is to say.
  socket.onerror = () => {};
  socket.onclose = (event) => push({ type: 'closed', code: event.code, reason: event.reason, opened });
  /** @param {string | Uint8Array} data */
  const send = (data) => {
    if (socket.readyState !== WebSocket.OPEN) throw new Error('the relay socket is not open');
    if (socket.bufferedAmount > MAXIMUM_BUFFERED) throw new Error('the relay is not taking frames (over 4 MiB wait to be sent)');
    socket.send(data);
  };
  return {
    sendText: send,
    send,
    close() {
      if (socket.readyState === WebSocket.CONNECTING || socket.readyState === WebSocket.OPEN) socket.close(1000);
    },
    abandon() {
      handler = () => {};
      queue.length = 0;
      socket.onopen = socket.onmessage = socket.onclose = null;
      if (socket.readyState === WebSocket.CONNECTING || socket.readyState === WebSocket.OPEN) socket.close(1000);
    },
    listen(next) {
      handler = next;
      while (queue.length > 0 && handler === next) next(/** @type {RelaySocketEvent} */ (queue.shift()));
    },
  };
}

/**
 * The relay's HTTP side at `origin` (`https://relay.example.com`).
 * @param {string} origin
 * @returns {RelayHTTP}
 */
export function fetchRelayHTTP(origin) {
  return {
    async post(path, room, body) {
      const response = await fetch(origin + path, {
        method: 'POST', body, cache: 'no-store', credentials: 'omit', redirect: 'error',
        headers: { 'content-type': 'application/json', 'x-relay-room': room },
      });
      const text = (await response.text()).slice(0, 1024 * 1024);
      return { status: response.status, text };
    },
  };
}

/**
 * The page's clock: `performance.now()` (monotonic), `Date.now()`, `setTimeout`.
 * @type {Clock}
 */
export const browserClock = Object.freeze({
  now: () => performance.now() / 1000,
  unixTime: () => Date.now() / 1000,
  /**
   * @param {number} seconds
   * @param {() => void} fire
   */
  setTimer(seconds, fire) {
    const handle = setTimeout(fire, Math.max(0, seconds * 1000));
    return () => clearTimeout(handle);
  },
});
