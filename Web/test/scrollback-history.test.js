// ScrollbackHistory (scrollback-history.js) against a computer played here as herdr-host's
// ScreenTerminal.scrollback answers (the newest kept lines before min(end, total), less the
// oldest of them when they do not fit one message): the first page, pages up to the oldest kept
// line, lines that scroll off while the person reads, the bound of 2000, one request at a time,
// answers it did not ask for or that do not fit what it asked, a resume and a session afresh.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScrollbackHistory } from '../js/scrollback-history.js';
import { ScrollbackLines } from '../js/scrollback-lines.js';
import { ScreenCell } from '../js/screen-cell.js';

/** @typedef {import('../js/scrollback-history.js').ScrollbackRequest} ScrollbackRequest */
/** @typedef {import('../js/scrollback-lines.js').ScrollbackLines} Answer */

const NEWEST = 2n ** 64n - 1n;

/** The computer's side: lines `L<n>` scroll off, the newest `keeps` of them kept. */
class Computer {
  /** @param {{total?: number, keeps?: number}} [options] */
  constructor(options = {}) {
    this.keeps = BigInt(options.keeps ?? 2000);
    this.total = 0n;
    this.oldest = 0n;
    this.scroll(options.total ?? 0);
  }

  /** @param {number} lines more lines scroll off the top of the screen */
  scroll(lines) {
    this.total += BigInt(lines);
    if (this.total - this.oldest > this.keeps) this.oldest = this.total - this.keeps;
  }

  /**
   * The answer to `request`, as ScreenTerminal.scrollback makes it; `fit` lines at most (the
   * newest), as ScrollbackLines.answer leaves out the oldest that do not fit one message.
   * @param {ScrollbackRequest | null} request
   * @param {{fit?: number, stream?: number}} [options]
   * @returns {Answer}
   */
  answer(request, options = {}) {
    if (request === null) throw new Error('no request to answer');
    const upper = request.end < this.total ? request.end : this.total;
    const below = upper - (upper < BigInt(request.count) ? upper : BigInt(request.count));
    const lower = below > this.oldest ? below : this.oldest;
    let first = upper > lower ? lower : upper;
    let lines = [];
    for (let number = first; number < upper; number++) lines.push(line(`L${number}`));
    if (options.fit !== undefined && lines.length > options.fit) {
      first += BigInt(lines.length - options.fit);
      lines = lines.slice(lines.length - options.fit);
    }
    return { stream: options.stream ?? request.stream, first, oldest: this.oldest, total: this.total, lines };
  }
}

/** @param {string} text @returns {ScreenCell[]} */
const line = (text) => Array.from(text, (character) => ScreenCell.make(character));

/**
 * The lines held as their texts' numbers (`L17` → 17).
 * @param {ScrollbackHistory} history
 */
const numbers = (history) => history.lines.map((cells) => Number(cells.map((cell) => cell.text).join('').slice(1)));

/** @param {number} from @param {number} to @returns {number[]} */
const range = (from, to) => Array.from({ length: to - from }, (_, index) => from + index);

test('an empty history asks for the newest page: before line 2^64 − 1, a page of 100', () => {
  const history = new ScrollbackHistory();
  assert.equal(history.first, null);
  assert.equal(history.end, null);
  assert.equal(history.total, null);
  assert.deepEqual(history.lines, []);
  assert.equal(history.behind, false);
  assert.equal(ScrollbackHistory.capacity, 2000, 'as many as the computer keeps');
  assert.ok(ScrollbackHistory.page <= ScrollbackLines.maximumRequest);
  const request = history.older(3);
  assert.deepEqual(request, { type: 'scrollbackRequest', stream: 3, end: NEWEST, count: 100 });
  assert.equal(history.loadingOlder, true);
  assert.equal(history.older(3), null, 'one request in flight');
  assert.equal(history.newer(3), null);
  // With nothing held, coming back to look asks for the same: the lines right above the screen.
  const other = new ScrollbackHistory();
  assert.deepEqual(other.newer(3), request);
});

test('an answer with no lines: nothing scrolled off; no older one is asked for, a later look asks after it', () => {
  const computer = new Computer();
  const history = new ScrollbackHistory();
  assert.equal(history.receive(computer.answer(history.older(1))), 'accepted');
  assert.equal(history.first, 0n);
  assert.equal(history.end, 0n);
  assert.equal(history.total, 0n);
  assert.equal(history.reachedOldest, true);
  assert.equal(history.loadingOlder, false);
  assert.equal(history.older(1), null, 'nothing older is kept: it stops asking');
  // Lines scroll off later; looking again asks for the lines after the (empty) history.
  computer.scroll(30);
  const request = history.newer(1);
  assert.deepEqual(request, { type: 'scrollbackRequest', stream: 1, end: 100n, count: 100 });
  assert.equal(history.receive(computer.answer(request)), 'accepted');
  assert.deepEqual(numbers(history), range(0, 30));
  assert.equal(history.older(1), null, 'line 0 is the first there is');
});

test('pages going up join without a hole, down to line 0', () => {
  const computer = new Computer({ total: 250 });
  const history = new ScrollbackHistory();
  history.receive(computer.answer(history.older(1)));
  assert.deepEqual(numbers(history), range(150, 250), 'the newest page: the lines right above the screen');
  assert.equal(history.first, 150n);
  assert.equal(history.total, 250n);
  assert.equal(history.reachedOldest, false);
  const second = history.older(1);
  assert.deepEqual(second, { type: 'scrollbackRequest', stream: 1, end: 150n, count: 100 });
  history.receive(computer.answer(second));
  const third = history.older(1);
  assert.deepEqual(third, { type: 'scrollbackRequest', stream: 1, end: 50n, count: 50 }, 'no lines before 0 are asked for');
  assert.equal(history.receive(computer.answer(third)), 'accepted');
  assert.deepEqual(numbers(history), range(0, 250));
  assert.equal(history.reachedOldest, true);
  assert.equal(history.older(1), null);
});

test('it asks no further back than the oldest line the computer keeps; an answer with none stops it', () => {
  const computer = new Computer({ total: 250, keeps: 130 });
  const history = new ScrollbackHistory();
  history.receive(computer.answer(history.older(1)));
  const next = history.older(1);
  assert.deepEqual(next, { type: 'scrollbackRequest', stream: 1, end: 150n, count: 30 }, 'the computer keeps lines from 120');
  history.receive(computer.answer(next));
  assert.deepEqual(numbers(history), range(120, 250));
  assert.equal(history.reachedOldest, true);
  assert.equal(history.older(1), null);

  // The oldest kept moves on while the request is on its way: the answer holds none.
  const late = new ScrollbackHistory();
  const lateComputer = new Computer({ total: 250, keeps: 200 });
  late.receive(lateComputer.answer(late.older(1)));
  const asked = late.older(1);
  assert.deepEqual(asked, { type: 'scrollbackRequest', stream: 1, end: 150n, count: 100 });
  lateComputer.scroll(150); // lines 0–199 are gone now
  const none = lateComputer.answer(asked);
  assert.deepEqual([none.first, none.lines.length], [150n, 0]);
  assert.equal(late.receive(none), 'accepted');
  assert.deepEqual(numbers(late), range(150, 250));
  assert.equal(late.reachedOldest, true, 'an answer with none: nothing older is kept');
  assert.equal(late.older(1), null);
  assert.equal(late.behind, true, 'and 150 lines scrolled off below those held');
});

test('lines that scroll off while the person reads come in below those held, as each answer tells the total', () => {
  const computer = new Computer({ total: 250 });
  const history = new ScrollbackHistory();
  history.receive(computer.answer(history.older(1)));
  assert.equal(history.behind, false);
  computer.scroll(30);
  history.receive(computer.answer(history.older(1)));
  assert.deepEqual([history.first, history.end, history.total], [50n, 250n, 280n]);
  assert.equal(history.behind, true, 'the answer says 280 scrolled off: 30 more than held');
  const newer = history.newer(1);
  assert.deepEqual(newer, { type: 'scrollbackRequest', stream: 1, end: 350n, count: 100 }, 'the page after the newest held');
  assert.equal(history.loadingOlder, false);
  // The computer has only 30 after 250, so it answers the newest page, 180–279: the rest is held already.
  assert.equal(history.receive(computer.answer(newer)), 'accepted');
  assert.deepEqual(numbers(history), range(50, 280));
  assert.equal(history.behind, false);
  // Far behind: a page at a time from the newest held, no hole.
  computer.scroll(250);
  const probe = history.newer(1);
  history.receive(computer.answer(probe));
  assert.deepEqual([history.end, history.total, history.behind], [380n, 530n, true]);
  history.receive(computer.answer(history.newer(1)));
  history.receive(computer.answer(history.newer(1)));
  assert.deepEqual(numbers(history), range(50, 530));
  assert.equal(history.behind, false);
});

test('newer lines that do not all fit one message: the next request asks for only those left out', () => {
  const computer = new Computer({ total: 100 });
  const history = new ScrollbackHistory();
  history.receive(computer.answer(history.older(1)));
  computer.scroll(100);
  const newer = /** @type {ScrollbackRequest} */ (history.newer(1));
  assert.equal(history.receive(computer.answer(newer, { fit: 60 })), 'accepted');
  assert.deepEqual(numbers(history), range(0, 100), 'lines 140–199 alone would leave a hole: not taken');
  assert.equal(history.behind, true);
  const rest = history.newer(1);
  assert.deepEqual(rest, { type: 'scrollbackRequest', stream: 1, end: 140n, count: 40 });
  history.receive(computer.answer(rest));
  assert.deepEqual(numbers(history), range(0, 140));
  assert.deepEqual(history.newer(1), { type: 'scrollbackRequest', stream: 1, end: 240n, count: 100 }, 'a whole page again');
  // Older pages that do not fit are simply fewer: they still end at the first line held.
  const older = new ScrollbackHistory();
  const big = new Computer({ total: 500 });
  older.receive(big.answer(older.older(1)));
  older.receive(big.answer(older.older(1), { fit: 10 }));
  assert.deepEqual(numbers(older), range(390, 500));
});

test('the lines after those held no longer kept: the history starts again from the newest', () => {
  const computer = new Computer({ total: 300 });
  const history = new ScrollbackHistory();
  history.receive(computer.answer(history.older(1)));
  computer.scroll(5000);
  assert.equal(history.receive(computer.answer(history.newer(1))), 'accepted');
  assert.deepEqual([history.first, history.lines.length, history.behind, history.reachedOldest], [null, 0, false, false]);
  const newest = history.older(1);
  assert.deepEqual(newest, { type: 'scrollbackRequest', stream: 1, end: NEWEST, count: 100 });
  history.receive(computer.answer(newest));
  assert.deepEqual(numbers(history), range(5200, 5300));
});

test('at most 2000 lines, as the computer keeps: newer lines push the oldest out, and older ones stop at the bound', () => {
  const computer = new Computer({ total: 5000 });
  const history = new ScrollbackHistory();
  let requests = 0;
  for (let request = history.older(1); request !== null; request = history.older(1)) {
    assert.equal(history.receive(computer.answer(request)), 'accepted');
    requests += 1;
  }
  assert.equal(requests, 20);
  assert.deepEqual([history.first, history.end, history.lines.length, history.reachedOldest], [3000n, 5000n, 2000, true]);
  computer.scroll(50);
  history.receive(computer.answer(history.newer(1)));
  assert.deepEqual([history.first, history.end, history.lines.length], [3050n, 5050n, 2000]);
  assert.deepEqual(numbers(history).slice(0, 2), [3050, 3051]);
  assert.equal(history.older(1), null, 'full');

  // A computer that keeps more than the bound: the last older page asks only for the room left.
  const small = new ScrollbackHistory({ capacity: 150, page: 100 });
  const keeper = new Computer({ total: 1000, keeps: 5000 });
  small.receive(keeper.answer(small.older(1)));
  const last = small.older(1);
  assert.deepEqual(last, { type: 'scrollbackRequest', stream: 1, end: 900n, count: 50 });
  small.receive(keeper.answer(last));
  assert.deepEqual(numbers(small), range(850, 1000));
  assert.equal(small.older(1), null);
  // An answer that brings more than was asked is refused, so the bound holds whatever comes.
  const over = new ScrollbackHistory({ capacity: 150, page: 100 });
  over.receive(keeper.answer(over.older(1)));
  const asked = /** @type {ScrollbackRequest} */ (over.older(1));
  assert.equal(over.receive(keeper.answer({ ...asked, count: 100 })), 'refused');
  assert.equal(over.lines.length, 100);
});

test('one request at a time: an answer not asked for, of another stream, or unlike the request is left', () => {
  const computer = new Computer({ total: 500 });
  const history = new ScrollbackHistory();
  assert.equal(history.receive(computer.answer({ type: 'scrollbackRequest', stream: 1, end: NEWEST, count: 100 })), 'ignored',
    'nothing asked');
  const request = /** @type {ScrollbackRequest} */ (history.older(1));
  const answer = computer.answer(request);
  assert.equal(history.receive({ ...answer, stream: 2 }), 'ignored', "another stream's");
  assert.deepEqual(history.inFlight, request, 'still waited for');
  assert.equal(history.receive(answer), 'accepted');
  assert.equal(history.receive(answer), 'ignored', 'the same answer again');
  const before = numbers(history);

  /** @param {(answer: Answer) => Answer} change */
  const refusedAfter = (change) => {
    const asked = /** @type {ScrollbackRequest} */ (history.older(1));
    const verdict = history.receive(change(computer.answer(asked)));
    assert.equal(history.inFlight, null, 'given up');
    assert.deepEqual(numbers(history), before, 'nothing taken');
    return verdict;
  };
  assert.equal(refusedAfter((lines) => ({ ...lines, first: lines.first - 1n })), 'refused', 'not ending where the history begins');
  assert.equal(refusedAfter((lines) => ({ ...lines, lines: [...lines.lines, line('extra')] })), 'refused', 'more than asked for');
  assert.equal(refusedAfter((lines) => ({ ...lines, total: 450n })), 'refused', 'fewer lines ever scrolled off than held');
  computer.scroll(10);
  history.receive(computer.answer(history.newer(1)));
  assert.equal(history.total, 510n);
  const newer = /** @type {ScrollbackRequest} */ (history.newer(1));
  assert.equal(history.receive({ ...computer.answer(newer), total: 505n, lines: [], first: 505n }), 'refused', 'a total going back');
});

test('a resume keeps the lines and gives up the request in flight; an answer on the old stream is left', () => {
  const computer = new Computer({ total: 500 });
  const history = new ScrollbackHistory();
  history.receive(computer.answer(history.older(1)));
  const lost = history.older(1);
  history.resumed();
  assert.equal(history.inFlight, null);
  assert.deepEqual(numbers(history), range(400, 500), 'the same session: its lines stay');
  const again = history.older(2);
  assert.deepEqual(again, { type: 'scrollbackRequest', stream: 2, end: 400n, count: 100 });
  assert.equal(history.receive(computer.answer(lost)), 'ignored', 'out of order: the old connection');
  assert.equal(history.receive(computer.answer(again)), 'accepted');
  assert.deepEqual(numbers(history), range(300, 500));
  // A request on a new stream gives up one on the old, resumed or not.
  const old = history.older(2);
  const next = history.older(3);
  assert.deepEqual(next, { type: 'scrollbackRequest', stream: 3, end: 300n, count: 100 });
  assert.equal(history.receive(computer.answer(old)), 'ignored');
  assert.equal(history.receive(computer.answer(next)), 'accepted');
});

test('a session opened afresh forgets everything: its lines are numbered from 0 again', () => {
  const computer = new Computer({ total: 500 });
  const history = new ScrollbackHistory();
  history.receive(computer.answer(history.older(1)));
  const asked = history.older(1);
  history.attachAfresh();
  assert.deepEqual([history.first, history.end, history.total, history.inFlight, history.lines.length, history.reachedOldest],
    [null, null, null, null, 0, false]);
  assert.equal(history.receive(computer.answer(asked)), 'ignored');
  const fresh = new Computer({ total: 20 });
  const request = history.older(2);
  assert.deepEqual(request, { type: 'scrollbackRequest', stream: 2, end: NEWEST, count: 100 });
  history.receive(fresh.answer(request));
  assert.deepEqual(numbers(history), range(0, 20));
});

test('its bounds: a page of 1 to 1000 within the capacity, a stream of 1 to 2^32 − 1', () => {
  assert.throws(() => new ScrollbackHistory({ capacity: 0 }), RangeError);
  assert.throws(() => new ScrollbackHistory({ page: 0 }), RangeError);
  assert.throws(() => new ScrollbackHistory({ page: 1001, capacity: 5000 }), RangeError);
  assert.throws(() => new ScrollbackHistory({ capacity: 50 }), RangeError, 'a page beyond the capacity');
  assert.equal(new ScrollbackHistory({ capacity: 50, page: 50 }).page, 50);
  assert.throws(() => new ScrollbackHistory().older(0), RangeError);
  assert.throws(() => new ScrollbackHistory().newer(2 ** 32), RangeError);
});
