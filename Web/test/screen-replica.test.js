// The device's copy of a screen (screen-replica.js), fed the messages a computer sends: the test
// encoder of screen states (test-support/screen-states.js, the Swift side's ScreenDiff and
// ScreenParts) on one side, the bytes parsed as the channel would, the replica on the other. The
// device's screen is the computer's after every state; what the computer may not send is
// refused. The device's cases of Tests/CompanionTests/ScreenStateTests.swift, and more.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScreenReplica } from '../js/screen-replica.js';
import { ScreenCell } from '../js/screen-cell.js';
import { CellStyle } from '../js/cell-style.js';
import { TerminalColor } from '../js/terminal-color.js';
import { TerminalScreen } from '../js/terminal-screen.js';
import { ScreenModes } from '../js/screen-modes.js';
import { ScreenUpdate } from '../js/screen-update.js';
import { SessionMessage } from '../js/session-message.js';
import { ScreenStatesForTests, copyScreen, deliver, rowChanges } from '../test-support/screen-states.js';
import { seededRandom } from '../test-support/support.js';

/** @typedef {import('../js/screen-update.js').ScreenUpdate} Update */
/** @typedef {import('../js/screen-update.js').ScreenUpdateRow} Row */
/** @typedef {import('../js/session-message.js').SessionMessage} Message */
/** @typedef {import('../js/screen-replica.js').ScreenReplicaOutcome} Outcome */

/**
 * A screen of `rows`' texts (one cell a character), `columns` wide.
 * @param {string[]} rows
 * @param {{columns?: number, cursor?: [number, number], title?: string}} [options]
 * @returns {TerminalScreen}
 */
function screenOf(rows, options = {}) {
  const columns = options.columns ?? 10;
  const lines = rows.map((text) => {
    const cells = Array.from(text, (character) => ScreenCell.make(character));
    return [...cells, ...new Array(columns - cells.length).fill(ScreenCell.blank)];
  });
  const [row, column] = options.cursor ?? [0, 0];
  return TerminalScreen.make(lines, { row, column, visible: true }, ScreenModes.make(), options.title ?? '');
}

/** @param {Message[]} messages @param {ScreenReplica} replica @returns {Outcome | undefined} */
const into = (messages, replica) => deliver(messages, (update) => replica.apply(update));

/** @param {Message} message @returns {Update} */
function updateOf(message) {
  if (message.type !== 'screen') throw new Error(`not a screen message: ${message.type}`);
  return message.update;
}

/** @param {TerminalScreen} actual @param {TerminalScreen} expected @param {string} [what] */
function sameScreen(actual, expected, what) {
  if (!TerminalScreen.equal(actual, expected)) {
    const rows = (/** @type {TerminalScreen} */ screen) => screen.lines.map((_, row) => TerminalScreen.textOfRow(screen, row));
    assert.deepEqual({ rows: rows(actual), cursor: actual.cursor, title: actual.title },
      { rows: rows(expected), cursor: expected.cursor, title: expected.title }, what);
    assert.ok(false, `the screens differ in their cells' styles or widths, or their modes: ${what ?? ''}`);
  }
}

/**
 * A screen update made by hand, for what a computer may not send.
 * @param {Partial<Update>} fields
 * @returns {Update}
 */
function handMade(fields) {
  return {
    stream: 1, state: 1n, base: 0n, inputBytes: 0n, isLastPart: true, columns: 10, rows: 4,
    cursor: { row: 0, column: 0, visible: true }, modes: ScreenModes.make(), bells: 0, scroll: 0, title: null, lines: [],
    ...fields,
  };
}

test('screen replica: the first state is whole and the next only what changed', () => {
  const sender = new ScreenStatesForTests(1);
  const replica = new ScreenReplica();
  const first = screenOf(['$ ls', '', '', ''], { title: 'shell' });
  const whole = sender.messages(first, 0);
  const update = updateOf(whole[0]);
  assert.ok(update.base === 0n && update.state === 1n && update.title === 'shell');
  assert.deepEqual(update.lines.map((row) => row.index), [0], 'blank rows are not sent');
  assert.deepEqual(into(whole, replica), { kind: 'complete', state: 1n, rang: false });
  sameScreen(replica.screen, first);
  assert.deepEqual(sender.messages(first, 0), [], 'nothing new');

  const second = copyScreen(first);
  second.lines[1] = screenOf(['a.txt']).lines[0];
  second.cursor.row = 2;
  const change = sender.messages(second, 1);
  const diff = updateOf(change[0]);
  assert.ok(diff.base === 1n && diff.state === 2n && diff.title === null);
  assert.deepEqual(diff.lines.map((row) => row.index), [1]);
  assert.deepEqual(into(change, replica), { kind: 'complete', state: 2n, rang: true }, 'the bells changed');
  sameScreen(replica.screen, second);
  assert.equal(replica.bells, 1);
});

test('screen replica: a scroll is sent as a number and the new rows', () => {
  const sender = new ScreenStatesForTests(1);
  const replica = new ScreenReplica();
  into(sender.messages(screenOf(['1', '2', '3', '4', '5']), 0), replica);
  const after = screenOf(['3', '4', '5', '6', '']);
  const messages = sender.messages(after, 0);
  const update = updateOf(messages[0]);
  assert.equal(update.scroll, 2);
  assert.deepEqual(update.lines.map((row) => row.index), [3]);
  into(messages, replica);
  sameScreen(replica.screen, after);
});

test('screen replica: a thousand by a thousand screen spans several messages and arrives whole', () => {
  const sender = new ScreenStatesForTests(9);
  const replica = new ScreenReplica();
  const styles = Array.from({ length: 7 }, (_, i) => CellStyle.make({ foreground: TerminalColor.rgb(i, 0, 9), flags: CellStyle.flags.italic }));
  const row = Array.from({ length: 1000 }, (_, i) => ScreenCell.make(i % 2 === 0 ? '語' : '', i % 2 === 0 ? 2 : 0, styles[Math.floor(i / 2) % 7]));
  const big = TerminalScreen.make(Array.from({ length: 1000 }, () => row.slice()), { row: 999, column: 999, visible: false });
  const messages = sender.messages(big, 0);
  assert.ok(messages.length > 20, `${messages.length} messages`);
  /** @type {Outcome[]} */
  const outcomes = [];
  deliver(messages, (update) => outcomes.push(replica.apply(update)));
  assert.ok(outcomes.slice(0, -1).every((outcome) => outcome.kind === 'partial'));
  assert.deepEqual(outcomes[outcomes.length - 1], { kind: 'complete', state: 1n, rang: false });
  sameScreen(replica.screen, big);
});

test('screen replica: a state with no change confirms the input the program had', () => {
  const sender = new ScreenStatesForTests(1);
  const replica = new ScreenReplica();
  const screen = screenOf(['$ ']);
  into(sender.messages(screen, 0), replica);
  const confirming = sender.messages(screen, 0, 3n);
  assert.equal(updateOf(confirming[0]).lines.length, 0);
  assert.deepEqual(into(confirming, replica), { kind: 'complete', state: 2n, rang: false });
  assert.equal(replica.inputBytes, 3n);
});

test('screen replica: a new connection gets the whole screen under a new number', () => {
  const sender = new ScreenStatesForTests(1);
  const replica = new ScreenReplica();
  into(sender.messages(screenOf(['a'], { title: 't' }), 0), replica);
  sender.restart();
  replica.restart();
  const messages = sender.messages(screenOf(['b'], { title: 't' }), 0);
  const update = updateOf(messages[0]);
  assert.ok(update.base === 0n && update.state === 2n && update.title === 't');
  assert.deepEqual(into(messages, replica), { kind: 'complete', state: 2n, rang: false });
  sameScreen(replica.screen, screenOf(['b'], { title: 't' }));
});

test('screen replica: a restart drops a half-arrived state, and the whole one after it applies', () => {
  const replica = new ScreenReplica();
  assert.deepEqual(replica.apply(handMade({ state: 1n, isLastPart: false, lines: [ScreenUpdate.row(0, [ScreenCell.make('x')])] })),
    { kind: 'partial' });
  assert.equal(replica.state, 0n, 'no state is complete yet');
  replica.restart();
  assert.deepEqual(replica.apply(handMade({ state: 2n, lines: [ScreenUpdate.row(1, [ScreenCell.make('y')])] })),
    { kind: 'complete', state: 2n, rang: false });
  assert.deepEqual(replica.screen.lines.map((_, row) => TerminalScreen.textOfRow(replica.screen, row)), ['', 'y', '', '']);
});

test('screen replica: what the computer may not send is refused', () => {
  const sender = new ScreenStatesForTests(1);
  const first = sender.messages(screenOf(['a']), 0);
  const second = sender.messages(screenOf(['b']), 0);
  assert.equal(into(second, new ScreenReplica())?.kind, 'broken', 'a change of a state this device does not hold');
  const fresh = new ScreenReplica();
  into(first, fresh);
  assert.equal(into(first, fresh)?.kind, 'broken', 'a state number again');

  /** @param {Update[]} updates @returns {Outcome[]} */
  const run = (updates) => {
    const replica = new ScreenReplica();
    return updates.map((update) => replica.apply(update));
  };
  /** @param {Outcome | undefined} outcome @param {RegExp} reason */
  const brokenBy = (outcome, reason) => {
    assert.ok(outcome !== undefined && outcome.kind === 'broken', JSON.stringify(outcome, (_, v) => typeof v === 'bigint' ? `${v}` : v));
    assert.match(outcome.reason, reason);
  };
  brokenBy(run([handMade({ state: 1n, isLastPart: false }), handMade({ state: 2n })])[1], /began before state 1 ended/);
  brokenBy(run([handMade({ state: 3n }), handMade({ state: 2n, base: 0n })])[1], /came after state 3/);
  brokenBy(run([handMade({ state: 3n }), handMade({ state: 5n, base: 4n })])[1], /changes state 4, but this device has 3/);
  brokenBy(run([handMade({ state: 1n }), handMade({ state: 2n, base: 1n, rows: 5, scroll: 1 })])[1], /scrolls a screen of another size/);
  brokenBy(run([handMade({ state: 1n, isLastPart: false }), handMade({ state: 1n, columns: 11 })])[1], /disagree on its size/);
  brokenBy(run([handMade({ state: 1n, lines: [ScreenUpdate.row(4, [])] })])[0], /row 4 from column 0/);
  brokenBy(run([handMade({ state: 1n, lines: [ScreenUpdate.row(0, new Array(3).fill(ScreenCell.blank), 8)] })])[0], /row 0 from column 8/);
  // A change at another size without a scroll: the screen starts blank at the new size.
  const outcomes = run([
    handMade({ state: 1n, lines: [ScreenUpdate.row(0, [ScreenCell.make('a')])] }),
    handMade({ state: 2n, base: 1n, rows: 2, columns: 3, lines: [ScreenUpdate.row(1, [ScreenCell.make('b')])] }),
  ]);
  assert.deepEqual(outcomes[1], { kind: 'complete', state: 2n, rang: false });
});

test('screen replica: row entries write in place, and clear the rest unless they keep it', () => {
  const replica = new ScreenReplica();
  const row = Array.from('abcdefghij', (character) => ScreenCell.make(character));
  replica.apply(handMade({ state: 1n, title: 'first', lines: [ScreenUpdate.row(0, row), ScreenUpdate.row(1, row)] }));
  const x = ScreenCell.make('X');
  const outcome = replica.apply(handMade({
    state: 2n, base: 1n,
    lines: [ScreenUpdate.row(0, [x], 2, true), ScreenUpdate.row(0, [x, x], 5, true), ScreenUpdate.row(1, [x], 3)],
  }));
  assert.deepEqual(outcome, { kind: 'complete', state: 2n, rang: false });
  assert.equal(TerminalScreen.textOfRow(replica.screen, 0), 'abXdeXXhij', 'the cells after each entry stay');
  assert.equal(TerminalScreen.textOfRow(replica.screen, 1), 'abcX', 'the rest of the row is blank');
  assert.equal(replica.screen.title, 'first', 'a change without the title keeps it');
  // An entry with no cells clears the row from its column.
  replica.apply(handMade({ state: 3n, base: 2n, lines: [ScreenUpdate.row(0, [], 4)] }));
  assert.equal(TerminalScreen.textOfRow(replica.screen, 0), 'abXd');
  assert.ok(replica.screen.lines[0].slice(4).every((cell) => cell === ScreenCell.blank));
  // A whole state starts from a blank screen and no title.
  replica.apply(handMade({ state: 4n, base: 0n, lines: [ScreenUpdate.row(3, [x], 9)] }));
  assert.deepEqual(replica.screen.lines.map((_, i) => TerminalScreen.textOfRow(replica.screen, i)), ['', '', '', '         X']);
  assert.equal(replica.screen.title, '');
});

test('screen replica: the bell rings when the count changes, wrapping, never at a whole state', () => {
  const replica = new ScreenReplica();
  assert.deepEqual(replica.apply(handMade({ state: 1n, bells: 5 })), { kind: 'complete', state: 1n, rang: false });
  assert.deepEqual(replica.apply(handMade({ state: 2n, base: 1n, bells: 5 })), { kind: 'complete', state: 2n, rang: false });
  assert.deepEqual(replica.apply(handMade({ state: 3n, base: 2n, bells: 0xffffffff })), { kind: 'complete', state: 3n, rang: true });
  assert.deepEqual(replica.apply(handMade({ state: 4n, base: 3n, bells: 0 })), { kind: 'complete', state: 4n, rang: true });
  assert.equal(replica.bells, 0);
});

test('screen replica: a change within a row is sent as the cells that changed', () => {
  const text = 'PID USER  %CPU  TIME+   COMMAND        load 0.87, 1.06, 1.31    x';
  const wideColumn = text.length - 3;
  const old = screenOf([text], { columns: 80 }).lines[0];
  old[wideColumn] = ScreenCell.make('界', 2);
  old[wideColumn + 1] = ScreenCell.make('', 0);
  /** @param {(row: ScreenCell[]) => void} edit @returns {Row[]} */
  const changed = (edit) => {
    const now = old.slice();
    edit(now);
    return rowChanges(0, old, now);
  };
  assert.deepEqual(changed((row) => { row[12] = ScreenCell.make('9'); }), [ScreenUpdate.row(0, [ScreenCell.make('9')], 12, true)]);
  const near = changed((row) => {
    row[12] = ScreenCell.make('9');
    row[15] = ScreenCell.make('8');
  });
  assert.deepEqual(near.map((row) => [row.column, ScreenUpdate.rowEnd(row)]), [[12, 16]], 'changes 3 cells apart are one part');
  const apart = changed((row) => {
    row[2] = ScreenCell.make('9');
    row[40] = ScreenCell.make('8');
  });
  assert.deepEqual(apart.map((row) => [row.column, ScreenUpdate.rowEnd(row)]), [[2, 3], [40, 41]]);
  assert.ok(apart.every((row) => row.keepsRest));
  assert.equal(changed((row) => { row[wideColumn + 1] = ScreenCell.make('y'); })[0].column, wideColumn,
    "the wide character's cell starts the part");
  const shorter = changed((row) => row.fill(ScreenCell.blank, 50));
  assert.deepEqual(shorter, [ScreenUpdate.row(0, [], 50)], 'the rest of the row cleared');

  // Through the encoder and the bytes: the cells of one change, not the row.
  const sender = new ScreenStatesForTests(1);
  const replica = new ScreenReplica();
  const screen = screenOf([text, text], { columns: 80 });
  into(sender.messages(screen, 0), replica);
  const next = copyScreen(screen);
  next.lines[1][12] = ScreenCell.make('9');
  const messages = sender.messages(next, 0);
  const size = messages.reduce((sum, message) => sum + SessionMessage.encode(message).length, 0);
  assert.ok(size < 70, `${size} bytes`);
  into(messages, replica);
  sameScreen(replica.screen, next);
});

test('screen replica: wide characters over and under other cells arrive as they were', () => {
  const sender = new ScreenStatesForTests(1);
  const replica = new ScreenReplica();
  const screen = screenOf(['abcdefgh'], { columns: 8 });
  into(sender.messages(screen, 0), replica);
  const bold = CellStyle.make({ flags: CellStyle.flags.bold });
  for (const column of [3, 4, 0, 6, 3]) {
    screen.lines[0][column] = ScreenCell.make('界', 2, bold);
    screen.lines[0][column + 1] = ScreenCell.make('', 0, bold);
    into(sender.messages(screen, 0), replica);
    sameScreen(replica.screen, screen, `a wide character at ${column}`);
  }
  screen.lines[0][4] = ScreenCell.make('z');
  into(sender.messages(screen, 0), replica);
  sameScreen(replica.screen, screen, "a wide character's right half overwritten");
});

/**
 * Random screens of a seeded generator, with scrolls, resizes, titles, bells, restarts, wide
 * characters and styles, through the bytes: the device holds the computer's screen after every
 * state (the Swift side's randomScreensArriveAsTheyWere).
 */
test('screen replica: random screens arrive as they were (seeded)', () => {
  const glyphs = [
    ScreenCell.make('x'), ScreenCell.make('é'), ScreenCell.make(' '), ScreenCell.blank,
    ScreenCell.make('y', 1, CellStyle.make({ background: TerminalColor.indexed(4) })),
    ScreenCell.make('z', 1, CellStyle.make({ flags: CellStyle.flags.reverse, underline: 'double' })),
    ScreenCell.make('q', 1, CellStyle.make({ foreground: TerminalColor.rgb(9, 8, 7), flags: CellStyle.allFlags, underline: 'curly' })),
    ScreenCell.make('e\u0301'),
  ];
  let states = 0;
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const random = seededRandom(seed);
    /** @param {number} bound */
    const below = (bound) => random.below(Math.max(1, bound));
    const sender = new ScreenStatesForTests(1);
    const replica = new ScreenReplica();
    let columns = 12;
    let screen = screenOf(new Array(6).fill(''), { columns });
    let bells = 0;
    for (let step = 0; step < 300; step++) {
      switch (below(11)) {
        case 0: {
          const count = 1 + below(TerminalScreen.rows(screen) - 1);
          screen.lines.splice(0, count);
          screen.lines.push(...TerminalScreen.blankLines(columns, count));
          break;
        }
        case 1:
          columns = 4 + below(20);
          screen = screenOf(new Array(2 + below(8)).fill('q'), { columns, title: screen.title });
          break;
        case 2:
          screen.title = below(4) === 0 ? '' : `title ${step} ${'界'.repeat(below(3))}`;
          break;
        case 3:
          sender.restart();
          replica.restart();
          break;
        case 4: {
          // A wide character and its right half, over whatever was there.
          const row = below(TerminalScreen.rows(screen));
          const column = below(columns - 1);
          const style = CellStyle.make({ flags: step % 2 === 0 ? CellStyle.flags.bold : 0 });
          screen.lines[row][column] = ScreenCell.make('界', 2, style);
          screen.lines[row][column + 1] = ScreenCell.make('', 0, style);
          break;
        }
        case 5:
          bells = (bells + 1 + below(2)) >>> 0;
          screen.modes = ScreenModes.make({
            applicationCursorKeys: below(2) === 0, bracketedPaste: below(2) === 0, alternateScreen: below(2) === 0,
            reverseVideo: below(2) === 0, mouse: ScreenModes.mouseModes[below(4)],
          });
          break;
        default:
          for (let i = 0, n = 1 + below(6); i < n; i++) {
            screen.lines[below(TerminalScreen.rows(screen))][below(columns)] = glyphs[below(glyphs.length)];
          }
      }
      screen.cursor = { row: below(TerminalScreen.rows(screen)), column: below(columns), visible: step % 3 !== 0 };
      const messages = sender.messages(screen, bells, BigInt(step >> 4));
      if (messages.length === 0) continue;
      const outcome = into(messages, replica);
      assert.ok(outcome !== undefined && outcome.kind === 'complete', `seed ${seed}, step ${step}: ${outcome?.kind}`);
      sameScreen(replica.screen, screen, `seed ${seed}, step ${step}`);
      assert.equal(replica.state, sender.lastState);
      assert.equal(replica.bells, bells);
      states += 1;
    }
  }
  assert.ok(states > 2000, `${states} states`);
});

test('screen replica: random screens cut into small parts arrive whole', () => {
  // Parts of a few hundred bytes: a state spans many messages, each applied as it comes.
  const random = seededRandom(99);
  const replica = new ScreenReplica();
  let lastState = 0n;
  for (let round = 0; round < 40; round++) {
    const columns = 1 + random.below(40);
    const rows = 1 + random.below(30);
    const screen = TerminalScreen.make(TerminalScreen.blankLines(columns, rows), { row: random.below(rows), column: random.below(columns), visible: true });
    for (let i = 0; i < columns * rows / 2; i++) {
      screen.lines[random.below(rows)][random.below(columns)] = ScreenCell.make(String.fromCharCode(0x61 + random.below(26)), 1,
        CellStyle.make({ foreground: TerminalColor.indexed(random.below(3)) }));
    }
    const sender = new ScreenStatesForTests(2);
    sender.lastState = lastState;
    replica.restart();
    const messages = sender.messages(screen, 0).flatMap((message) => {
      // Re-cut the one message into parts of 4 rows each.
      const update = updateOf(message);
      /** @type {Message[]} */
      const parts = [];
      for (let start = 0; start < Math.max(1, update.lines.length); start += 4) {
        parts.push({ type: 'screen', update: { ...update, isLastPart: false, title: start === 0 ? update.title : null, lines: update.lines.slice(start, start + 4) } });
      }
      const last = parts[parts.length - 1];
      if (last.type === 'screen') last.update.isLastPart = true;
      return parts;
    });
    /** @type {Outcome[]} */
    const outcomes = [];
    deliver(messages, (update) => outcomes.push(replica.apply(update)));
    assert.ok(outcomes.slice(0, -1).every((outcome) => outcome.kind === 'partial'));
    assert.equal(outcomes[outcomes.length - 1].kind, 'complete');
    sameScreen(replica.screen, screen, `round ${round}`);
    lastState = sender.lastState;
  }
});
