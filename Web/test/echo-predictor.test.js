// EchoPredictor (echo-predictor.js) with a fake clock: every case of the Swift side's
// Tests/HerdrKitTests/Screen/EchoPredictorTests.swift, ported line for line (keys shown at once
// on a prompt and underlined until the computer's screen shows them, withdrawn where the program
// does not echo (a password), not shown again until one comes true, held after a key it cannot
// guess, off on the alternate screen, and shown by `adaptive` only when the echo is slow), then
// what the web client adds: the overlay a renderer lays over the screen, and a screen the
// replica goes on changing after it was received.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EchoPredictor, applyOverlay } from '../js/echo-predictor.js';
import { ScreenCell } from '../js/screen-cell.js';
import { ScreenModes } from '../js/screen-modes.js';
import { TerminalScreen } from '../js/terminal-screen.js';

/** @typedef {import('../js/echo-predictor.js').ScreenFrame} ScreenFrame */

/** @param {string} text @returns {number[]} */
const ascii = (text) => Array.from(text, (character) => character.charCodeAt(0));

/**
 * A 20×2 screen whose first row is `text`, the cursor after it unless given.
 * @param {string} text
 * @param {{cursor?: number, input: number, alternate?: boolean}} options
 * @returns {ScreenFrame}
 */
function frame(text, options) {
  const cells = Array.from(text, (character) => ScreenCell.make(character));
  const lines = [
    [...cells, ...new Array(20 - cells.length).fill(ScreenCell.blank)],
    new Array(20).fill(ScreenCell.blank),
  ];
  const screen = TerminalScreen.make(lines, { row: 0, column: options.cursor ?? cells.length, visible: true },
    ScreenModes.make({ alternateScreen: options.alternate ?? false }));
  return { screen, inputBytes: BigInt(options.input) };
}

/**
 * The first row as drawn, a predicted (underlined) character in brackets, then the cursor column.
 * @param {EchoPredictor} predictor
 * @returns {string}
 */
function row(predictor) {
  const screen = predictor.display;
  if (screen === null) return '';
  let text = '';
  for (const cell of screen.lines[0]) {
    const character = cell.text === '' ? ' ' : cell.text;
    text += cell.style.underline === 'single' ? `[${character}]` : character;
  }
  return text.replace(/ +$/, '') + `|${screen.cursor.column}`;
}

test('keys on a prompt show at once and are confirmed by the computer', () => {
  const predictor = new EchoPredictor('always');
  predictor.received(frame('$ ', { input: 0 }), 0);
  predictor.typed(ascii('ls'), 1);
  assert.equal(row(predictor), '$ [l][s]|4');
  // The computer's screen shows the first: it is no longer drawn as a guess.
  predictor.received(frame('$ l', { input: 0 }), 1.1);
  assert.equal(row(predictor), '$ l[s]|4');
  predictor.received(frame('$ ls', { input: 2 }), 1.2);
  assert.equal(row(predictor), '$ ls|4');
  assert.ok(predictor.isShowing);
  // A backspace erases the character before the cursor.
  predictor.typed([0x7f], 2);
  assert.equal(row(predictor), '$ l|3');
});

test('a password is withdrawn and trust comes back with an echo', () => {
  const predictor = new EchoPredictor('always');
  predictor.received(frame('Password: ', { input: 0 }), 0);
  predictor.typed(ascii('abc'), 1);
  assert.equal(row(predictor), 'Password: [a][b][c]|13');
  // The program had the keys for 50 ms and drew none: the guesses go.
  predictor.received(frame('Password: ', { input: 3 }), 1.2);
  assert.equal(row(predictor), 'Password:|10');
  assert.ok(!predictor.isShowing);
  predictor.typed(ascii('d'), 2);
  assert.equal(row(predictor), 'Password:|10', 'not shown while not believed');
  // An echo that comes true (the program echoes again) earns the trust back.
  predictor.received(frame('Password: d', { input: 4 }), 2.1);
  assert.ok(predictor.isShowing);
  predictor.typed(ascii('e'), 3);
  assert.equal(row(predictor), 'Password: d[e]|12');
});

test('the last column wraps to the next row', () => {
  const predictor = new EchoPredictor('always');
  const line = '-'.repeat(19);
  predictor.received(frame(line, { input: 0 }), 0);
  predictor.typed(ascii('x'), 1);
  assert.equal(row(predictor), line + '[x]|0');
  assert.equal(predictor.display?.cursor.row, 1, 'wrapped');
  // The computer shows the x and its cursor waits on it to wrap: the next key goes below.
  predictor.received(frame(line + 'x', { cursor: 19, input: 0 }), 1.1);
  predictor.typed(ascii('y'), 1.2);
  assert.equal(predictor.display?.lines[1][0].text, 'y');
  assert.equal(predictor.display?.cursor.row, 1);
  assert.equal(predictor.display?.cursor.column, 1);
});

test('a key it cannot guess holds predictions until the computer covers it', () => {
  const predictor = new EchoPredictor('always');
  predictor.received(frame('$ ', { input: 0 }), 0);
  predictor.typed(ascii('\rx'), 1);
  assert.equal(row(predictor), '$|2', 'Enter, then nothing guessed');
  // Once the computer covered the Enter, the next key is guessed after the x still on its way,
  // which is not drawn; keys typed meanwhile do not prolong the hold.
  predictor.received(frame('$ ', { cursor: 2, input: 1 }), 1.1);
  predictor.typed(ascii('y'), 1.2);
  assert.equal(row(predictor), '$  [y]|4');
  predictor.received(frame('$ xy', { input: 3 }), 1.3);
  predictor.typed(ascii('z'), 1.4);
  assert.equal(row(predictor), '$ xy[z]|5');
});

test('the alternate screen and never predict nothing', () => {
  const fullScreen = new EchoPredictor('always');
  fullScreen.received(frame('vim', { cursor: 0, input: 0, alternate: true }), 0);
  fullScreen.typed(ascii('ij'), 1);
  assert.equal(row(fullScreen), 'vim|0');
  const never = new EchoPredictor('never');
  never.received(frame('$ ', { input: 0 }), 0);
  never.typed(ascii('ls'), 1);
  assert.equal(row(never), '$|2');
});

test('adaptive shows predictions only when the echo is slow', () => {
  const predictor = new EchoPredictor('adaptive');
  predictor.received(frame('$ ', { input: 0 }), 0);
  let now = 1.0;
  let line = '$ ';
  // Echoes 10 ms after each key: nothing to hide, nothing predicted on screen.
  for (const key of 'abc') {
    predictor.typed(ascii(key), now);
    line += key;
    predictor.received(frame(line, { input: line.length - 2 }), now + 0.010);
    now += 1;
  }
  predictor.typed(ascii('d'), now);
  assert.equal(row(predictor), '$ abc|5');
  assert.ok(!predictor.isShowing);
  // The path slows to 150 ms: the echo time passes 30 ms and guesses are drawn.
  for (let i = 0; i < 4; i++) {
    line += 'd';
    predictor.received(frame(line, { input: line.length - 2 }), now + 0.150);
    now += 1;
    predictor.typed(ascii('d'), now);
  }
  assert.ok(predictor.isShowing);
  assert.ok((predictor.echoTime ?? 0) > EchoPredictor.adaptiveThreshold);
  assert.ok(row(predictor).endsWith(`[d]|${line.length + 1}`), row(predictor));
});

// What the web client adds.

test('nothing to draw before the first screen, and keys typed before it are not guessed', () => {
  const predictor = new EchoPredictor('always');
  assert.equal(predictor.display, null);
  assert.equal(predictor.overlay, null);
  predictor.typed(ascii('ab'), 0);
  predictor.received(frame('$ ', { input: 0 }), 0.1);
  // The two keys still on their way move the cursor: the next guess lands after them.
  predictor.typed(ascii('c'), 0.2);
  assert.equal(row(predictor), '$   [c]|5');
});

test('the overlay is what display lays over the computer\'s screen', () => {
  const predictor = new EchoPredictor('always');
  predictor.received(frame('$ ', { input: 0 }), 0);
  predictor.typed(ascii('ab'), 1);
  predictor.typed([0x7f], 1.1);
  predictor.typed(ascii('c'), 1.2);
  const overlay = predictor.overlay;
  assert.ok(overlay !== null);
  // The b was erased and the c typed over it: one cell a position, the latest guess there.
  assert.deepEqual(overlay.cells.map(({ row, column, cell, underlined }) => [row, column, cell.text, underlined]),
    [[0, 2, 'a', true], [0, 3, 'c', true]]);
  assert.deepEqual(overlay.cursor, { row: 0, column: 4 });
  assert.equal(overlay.cells[0].cell.style.underline, 'single');
  const display = predictor.display;
  assert.ok(display !== null);
  assert.equal(row(predictor), '$ [a][c]|4');
  // The computer's cursor keeps its visibility; only its place moves.
  assert.equal(display.cursor.visible, true);
  const drawn = applyOverlay(frame('$ ', { input: 0 }).screen, overlay);
  assert.ok(TerminalScreen.equal(drawn, display));
});

test('a backspace\'s erase is a blank, not underlined', () => {
  const predictor = new EchoPredictor('always');
  predictor.received(frame('$ ls', { input: 2 }), 0);
  predictor.typed([0x08], 1);
  const overlay = predictor.overlay;
  assert.ok(overlay !== null);
  assert.deepEqual(overlay.cells.map(({ column, cell, underlined }) => [column, cell === ScreenCell.blank, underlined]),
    [[3, true, false]]);
  assert.deepEqual(overlay.cursor, { row: 0, column: 3 });
  // At the start of the line, a backspace is not a guess: predictions hold until it is covered.
  const start = new EchoPredictor('always');
  start.received(frame('', { input: 0 }), 0);
  start.typed([0x7f], 1);
  start.typed(ascii('a'), 1.1);
  assert.deepEqual(start.overlay, { cells: [], cursor: null });
});

test('an overlay while not shown is empty; a multibyte character holds', () => {
  const predictor = new EchoPredictor('always');
  predictor.received(frame('$ ', { input: 0 }), 0);
  predictor.typed([0xc3, 0xa9], 1); // é
  predictor.typed(ascii('x'), 1.1);
  assert.deepEqual(predictor.overlay, { cells: [], cursor: null });
  predictor.received(frame('$ é', { input: 2 }), 1.2);
  predictor.typed(ascii('y'), 1.3);
  // The x (typed blind, not covered yet) moves the guess one further.
  assert.equal(row(predictor), '$ é [y]|5');
});

test('the last row\'s last column is not guessed (it would scroll)', () => {
  const predictor = new EchoPredictor('always');
  const cells = new Array(19).fill(ScreenCell.make('-'));
  const lines = [new Array(20).fill(ScreenCell.blank), [...cells, ScreenCell.blank]];
  predictor.received({ screen: TerminalScreen.make(lines, { row: 1, column: 19, visible: true }), inputBytes: 0n }, 0);
  predictor.typed(ascii('x'), 1);
  assert.deepEqual(predictor.overlay, { cells: [], cursor: null });
});

test('a screen the replica changes after it was received does not change the predictor\'s', () => {
  const predictor = new EchoPredictor('always');
  const first = frame('$ ', { input: 0 });
  predictor.received(first, 0);
  // The replica applies the next state's parts to the same rows in place.
  first.screen.lines[0][2] = ScreenCell.make('l');
  first.screen.cursor.column = 3;
  predictor.typed(ascii('l'), 1);
  assert.equal(row(predictor), '$ [l]|3');
});

test('an unknown mode is refused', () => {
  assert.throws(() => new EchoPredictor(/** @type {any} */ ('sometimes')), RangeError);
  assert.deepEqual([...EchoPredictor.modes], ['always', 'never', 'adaptive']);
});
