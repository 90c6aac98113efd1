// The device's copy of a screen session's scrollback (docs/companion.md, "Scrollback"): the
// lines it fetched from the computer, by their number, and which `scrollback request` goes next.
// Pure: no DOM, no clock; the page asks it for a request when the person scrolls, sends what it
// says, and hands it the answers.
//
// - It holds one run of lines without a hole, `first` to `end` (`end` ≤ `total`), at most 2000
//   of them: the computer keeps the newest 2000 (and at most 400,000 cells), so more would be
//   lines the computer no longer has either. Newer lines coming in push the oldest out.
// - `older` asks for a page before the oldest line held; with none held it asks for the newest
//   page, with `end` 2^64 − 1: the computer answers the newest lines before min(end, total), so
//   that is "the lines right above the screen" without knowing `total` (herdr-host's
//   ScreenTerminal.scrollback, and its ScreenSessionTests, ask so).
// - `total` is learned from each answer only. A screen state's `scroll` is not a count of lines
//   that scrolled off: it is the shift the computer's diff found best between two states
//   (ScreenDiff.bestScroll), 0 in a whole state and below the rows, so output of a screenful or
//   more between two states, or a resume, would be missed.
// - `newer` asks for a page after the newest line held: lines that scrolled off while the person
//   was reading, which the answer's `total` reveals (`behind`). The answer joins the lines held
//   or, when the lines right after them are no longer kept, the history starts again from the
//   newest.
// - One request is in flight at a time. An answer is taken only for that request's stream and
//   only if it is what the computer answers that request (the newest of the lines asked for that
//   it keeps and that fit one message, so it ends at min(end, total)); anything else is left.
//   A resume (a new stream) loses the request in flight but keeps the lines: the numbering is the
//   session's. A session opened afresh numbers from 0 again: everything is forgotten.

import { ScrollbackLines } from './scrollback-lines.js';

/** @typedef {import('./screen-cell.js').ScreenCell} ScreenCell */
/** @typedef {import('./scrollback-lines.js').ScrollbackLines} ScrollbackAnswer */

/**
 * A `scrollback request` as session-message.js encodes it.
 * @typedef {{type: 'scrollbackRequest', stream: number, end: bigint, count: number}} ScrollbackRequest
 */

/**
 * What became of an answer: `accepted` (the lines are in), `ignored` (not for the request in
 * flight: none is, or it is another stream's), `refused` (for it, but not what the computer
 * answers such a request: the request is given up).
 * @typedef {'accepted' | 'ignored' | 'refused'} ScrollbackVerdict
 */

/** @typedef {'older' | 'newer'} Direction */

/** The largest u64: with it as `end`, the computer answers the newest lines it keeps. */
const NEWEST = 0xffffffffffffffffn;
const CAPACITY = 2000;
const PAGE = 100;

export class ScrollbackHistory {
  /** The most lines held: what the computer keeps at most. */
  static capacity = CAPACITY;
  /** The lines one request asks for. */
  static page = PAGE;

  /** @type {ScreenCell[][]} */
  #lines = [];
  /** @type {bigint | null} the number of the first line held; null until an answer placed the history */
  #first = null;
  /** @type {bigint | null} the lines that ever scrolled off, as the newest answer said */
  #total = null;
  /** the oldest line the computer keeps, as the newest answer said */
  #oldest = 0n;
  /** nothing older than `first` is kept on the computer */
  #reachedOldest = false;
  /** @type {{request: ScrollbackRequest, direction: Direction} | null} */
  #inFlight = null;
  /** the count of the next `newer` request: a page, fewer after an answer that could not hold them all */
  #newerCount;

  /**
   * @param {{capacity?: number, page?: number}} [options] the most lines held (2000), the lines a
   *   request asks for (100; at most the capacity and ScrollbackLines.maximumRequest)
   */
  constructor(options = {}) {
    const capacity = options.capacity ?? CAPACITY;
    const page = options.page ?? PAGE;
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`a scrollback history of ${capacity} lines`);
    if (!Number.isInteger(page) || page < 1 || page > Math.min(capacity, ScrollbackLines.maximumRequest)) {
      throw new RangeError(`a scrollback page of ${page} lines`);
    }
    /** @readonly */
    this.capacity = capacity;
    /** @readonly */
    this.page = page;
    this.#newerCount = page;
  }

  /** The lines held, oldest first: line `first + i` is `lines[i]`. */
  get lines() {
    return /** @type {readonly (readonly ScreenCell[])[]} */ (this.#lines);
  }

  /** The number of the first line held; null before any answer placed the history. */
  get first() {
    return this.#first;
  }

  /** One after the newest line held; null before any answer placed the history. */
  get end() {
    return this.#first === null ? null : this.#first + BigInt(this.#lines.length);
  }

  /** The lines that ever scrolled off, as the newest answer said (null before one came). */
  get total() {
    return this.#total;
  }

  /** Nothing older than the first line held is kept on the computer (or none was ever). */
  get reachedOldest() {
    return this.#reachedOldest;
  }

  /** The request sent and not answered yet. */
  get inFlight() {
    return this.#inFlight?.request ?? null;
  }

  /** Whether the request in flight is for older lines (what the top of the history waits for). */
  get loadingOlder() {
    return this.#inFlight?.direction === 'older';
  }

  /** Lines scrolled off after the newest held, as far as the answers tell: `newer` fetches them. */
  get behind() {
    const end = this.end;
    return end !== null && this.#total !== null && this.#total > end;
  }

  /**
   * The request for the lines before the oldest held (the newest lines when none are held yet),
   * or null: one is in flight on `stream`, nothing older is kept, or the history is full.
   * @param {number} stream the stream the session is on now
   * @returns {ScrollbackRequest | null}
   */
  older(stream) {
    if (this.#busy(stream)) return null;
    if (this.#first === null) return this.#ask(stream, NEWEST, this.page, 'older');
    const room = this.capacity - this.#lines.length;
    const kept = this.#first - this.#oldest; // the lines before `first` the computer still has, at most
    if (this.#reachedOldest || room <= 0) return null;
    if (kept <= 0n) {
      this.#reachedOldest = true;
      return null;
    }
    const count = Math.min(room, kept < BigInt(this.page) ? Number(kept) : this.page);
    return this.#ask(stream, this.#first, count, 'older');
  }

  /**
   * The request for the lines after the newest held, which scrolled off since (the newest lines
   * when none are placed yet), or null when one is in flight on `stream`. Its answer also says
   * `total`, so it is how the page learns that lines scrolled off while the person read.
   * @param {number} stream
   * @returns {ScrollbackRequest | null}
   */
  newer(stream) {
    if (this.#busy(stream)) return null;
    const end = this.end;
    if (end === null) return this.#ask(stream, NEWEST, this.page, 'older');
    // Lines before `end + count`: the computer answers from `end` on, the newest page if it has fewer.
    return this.#ask(stream, end + BigInt(this.#newerCount), this.#newerCount, 'newer');
  }

  /**
   * An answer from the computer.
   * @param {ScrollbackAnswer} answer
   * @returns {ScrollbackVerdict}
   */
  receive(answer) {
    const flight = this.#inFlight;
    if (flight === null || answer.stream !== flight.request.stream) return 'ignored';
    this.#inFlight = null;
    const { end, count } = flight.request;
    const received = answer.lines.length;
    const last = end < answer.total ? end : answer.total;
    const held = this.end;
    if (received > count || answer.first + BigInt(received) !== last ||
      (this.#total !== null && answer.total < this.#total) || (held !== null && answer.total < held)) {
      return 'refused';
    }
    this.#total = answer.total;
    this.#oldest = answer.oldest;
    if (flight.direction === 'older') this.#addOlder(answer);
    else this.#addNewer(answer, /** @type {bigint} */ (held));
    return 'accepted';
  }

  /** The session resumed on a new stream: the request in flight will not be answered; the lines stay. */
  resumed() {
    this.#inFlight = null;
  }

  /** The session was opened afresh (the computer lost it): its lines are numbered from 0 again. */
  attachAfresh() {
    this.#lines = [];
    this.#first = null;
    this.#total = null;
    this.#oldest = 0n;
    this.#reachedOldest = false;
    this.#inFlight = null;
    this.#newerCount = this.page;
  }

  /**
   * Whether a request is in flight on `stream`. One on another stream was lost with its
   * connection (a resume not told of): it is given up.
   * @param {number} stream
   */
  #busy(stream) {
    if (!Number.isInteger(stream) || stream < 1 || stream > 0xffffffff) throw new RangeError(`stream ${stream}`);
    if (this.#inFlight !== null && this.#inFlight.request.stream !== stream) this.#inFlight = null;
    return this.#inFlight !== null;
  }

  /**
   * @param {number} stream
   * @param {bigint} end
   * @param {number} count
   * @param {Direction} direction
   * @returns {ScrollbackRequest}
   */
  #ask(stream, end, count, direction) {
    /** @type {ScrollbackRequest} */
    const request = { type: 'scrollbackRequest', stream, end, count };
    this.#inFlight = { request, direction };
    return request;
  }

  /**
   * Lines that end where the held ones begin (or the newest page, when none were placed).
   * @param {ScrollbackAnswer} answer
   */
  #addOlder(answer) {
    let lines = answer.lines;
    let first = answer.first;
    const room = this.capacity - this.#lines.length;
    if (lines.length > room) {
      // Never asked for: more than fit would be lines the computer no longer keeps either.
      first += BigInt(lines.length - room);
      lines = lines.slice(lines.length - room);
    }
    this.#lines = [...lines, ...this.#lines];
    this.#first = first;
    this.#reachedOldest = answer.lines.length === 0 || answer.first <= answer.oldest;
  }

  /**
   * Lines from `held` (one after the newest held) on, or the newest of them.
   * @param {ScrollbackAnswer} answer
   * @param {bigint} held
   */
  #addNewer(answer, held) {
    if (answer.first <= held) {
      // From `held` on (the computer had fewer than a page after it: the rest were held already).
      this.#lines.push(...answer.lines.slice(Number(held - answer.first)));
      const over = this.#lines.length - this.capacity;
      if (over > 0) {
        this.#lines.splice(0, over);
        this.#first = /** @type {bigint} */ (this.#first) + BigInt(over);
      }
      this.#newerCount = this.page;
    } else if (held < answer.oldest) {
      // The lines right after those held are gone for good: start again from the newest.
      this.#lines = [];
      this.#first = null;
      this.#reachedOldest = false;
      this.#newerCount = this.page;
    } else {
      // The lines asked for did not all fit one message and its oldest were left out: ask for
      // only those next, so the history stays without a hole.
      this.#newerCount = Math.max(1, Number(answer.first - held));
    }
  }
}
