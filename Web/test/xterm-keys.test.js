// The keys a browser reports, as xterm sends them (xterm-keys.js). Every row of the table is a
// key as a KeyboardEvent gives it and the bytes xterm's ctlseqs documents for it ("PC-Style
// Function Keys", "VT220-Style Function Keys", the cursor keys under DECCKM, the modifier
// parameter), or that X11's XLookupString gives xterm for Ctrl with a character. Then phone
// keyboards' input events, the sticky modifiers, the keys left to the browser, and pastes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inputBytes, keyBytes, modifierParameter, noStickyModifiers, paste } from '../js/xterm-keys.js';
import { ScreenModes } from '../js/screen-modes.js';

/** @typedef {import('../js/xterm-keys.js').KeyInput} KeyInput */

const normal = ScreenModes.make();
const application = ScreenModes.make({ applicationCursorKeys: true });
const bracketed = ScreenModes.make({ bracketedPaste: true });

/** @param {Uint8Array | null} bytes @returns {string | null} the bytes as a binary string */
const binary = (bytes) => (bytes === null ? null : String.fromCharCode(...bytes));
/** @param {Uint8Array | null} bytes @returns {string | null} */
const hex = (bytes) => (bytes === null ? null : Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join(' '));

/**
 * A key from a short description: `C-` Ctrl, `A-` Alt, `S-` Shift, then the key value.
 * @param {string} description
 * @param {Partial<KeyInput>} [extra]
 * @returns {KeyInput}
 */
function key(description, extra = {}) {
  let rest = description;
  const event = { key: '', code: '', ctrlKey: false, altKey: false, shiftKey: false, metaKey: false };
  for (;;) {
    if (rest.startsWith('C-') && rest.length > 2) { event.ctrlKey = true; rest = rest.slice(2); }
    else if (rest.startsWith('A-') && rest.length > 2) { event.altKey = true; rest = rest.slice(2); }
    else if (rest.startsWith('S-') && rest.length > 2) { event.shiftKey = true; rest = rest.slice(2); }
    else break;
  }
  event.key = rest;
  return { ...event, ...extra };
}

/**
 * [the key, the modes, the bytes xterm sends (ESC, CSI, SS3 spelled out)]
 * @type {[string, import('../js/xterm-keys.js').KeyModes, string][]}
 */
const TABLE = [
  // Text, as its UTF-8.
  ['a', normal, 'a'],
  ['S-A', normal, 'A'],
  ['~', normal, '~'],
  [' ', normal, ' '],
  ['é', normal, '\xc3\xa9'],
  ['€', normal, '\xe2\x82\xac'],
  ['😀', normal, '\xf0\x9f\x98\x80'],
  ['日', normal, '\xe6\x97\xa5'],
  // The keys of one byte.
  ['Enter', normal, '\r'],
  ['S-Enter', normal, '\r'],
  ['C-Enter', normal, '\r'],
  ['Backspace', normal, '\x7f'],
  ['S-Backspace', normal, '\x7f'],
  ['C-Backspace', normal, '\x08'],
  ['Tab', normal, '\t'],
  ['S-Tab', normal, '\x1b[Z'],
  ['Escape', normal, '\x1b'],
  // The cursor keys: CSI, SS3 under DECCKM.
  ['ArrowUp', normal, '\x1b[A'],
  ['ArrowDown', normal, '\x1b[B'],
  ['ArrowRight', normal, '\x1b[C'],
  ['ArrowLeft', normal, '\x1b[D'],
  ['ArrowUp', application, '\x1bOA'],
  ['ArrowDown', application, '\x1bOB'],
  ['ArrowRight', application, '\x1bOC'],
  ['ArrowLeft', application, '\x1bOD'],
  ['Home', normal, '\x1b[H'],
  ['End', normal, '\x1b[F'],
  ['Home', application, '\x1bOH'],
  ['End', application, '\x1bOF'],
  // Modified cursor keys: CSI 1 ; m, whatever DECCKM says.
  ['S-ArrowUp', normal, '\x1b[1;2A'],
  ['A-ArrowUp', normal, '\x1b[1;3A'],
  ['A-S-ArrowDown', normal, '\x1b[1;4B'],
  ['C-ArrowUp', normal, '\x1b[1;5A'],
  ['C-ArrowUp', application, '\x1b[1;5A'],
  ['C-S-ArrowRight', normal, '\x1b[1;6C'],
  ['C-A-ArrowLeft', normal, '\x1b[1;7D'],
  ['C-A-S-ArrowLeft', normal, '\x1b[1;8D'],
  ['C-Home', normal, '\x1b[1;5H'],
  ['S-End', application, '\x1b[1;2F'],
  // The editing keys.
  ['Insert', normal, '\x1b[2~'],
  ['Delete', normal, '\x1b[3~'],
  ['PageUp', normal, '\x1b[5~'],
  ['PageDown', normal, '\x1b[6~'],
  ['PageUp', application, '\x1b[5~'],
  ['S-Delete', normal, '\x1b[3;2~'],
  ['C-Delete', normal, '\x1b[3;5~'],
  ['S-PageUp', normal, '\x1b[5;2~'],
  ['C-Insert', normal, '\x1b[2;5~'],
  // The function keys.
  ['F1', normal, '\x1bOP'],
  ['F2', normal, '\x1bOQ'],
  ['F3', normal, '\x1bOR'],
  ['F4', normal, '\x1bOS'],
  ['F5', normal, '\x1b[15~'],
  ['F6', normal, '\x1b[17~'],
  ['F7', normal, '\x1b[18~'],
  ['F8', normal, '\x1b[19~'],
  ['F9', normal, '\x1b[20~'],
  ['F10', normal, '\x1b[21~'],
  ['F11', normal, '\x1b[23~'],
  ['F12', normal, '\x1b[24~'],
  ['F1', application, '\x1bOP'],
  ['S-F1', normal, '\x1b[1;2P'],
  ['C-F4', normal, '\x1b[1;5S'],
  ['S-F5', normal, '\x1b[15;2~'],
  ['C-F12', normal, '\x1b[24;5~'],
  ['A-F9', normal, '\x1b[20;3~'],
  // Ctrl with a letter: 0x01–0x1A, either case.
  ['C-a', normal, '\x01'],
  ['C-c', normal, '\x03'],
  ['C-d', normal, '\x04'],
  ['C-z', normal, '\x1a'],
  ['C-S-A', normal, '\x01'],
  ['C-S-Z', normal, '\x1a'],
  // Ctrl with the other characters of 0x40–0x7E, space, and the digits.
  ['C-@', normal, '\x00'],
  ['C- ', normal, '\x00'],
  ['C-[', normal, '\x1b'],
  ['C-\\', normal, '\x1c'],
  ['C-]', normal, '\x1d'],
  ['C-^', normal, '\x1e'],
  ['C-_', normal, '\x1f'],
  ['C-`', normal, '\x00'],
  ['C-{', normal, '\x1b'],
  ['C-|', normal, '\x1c'],
  ['C-}', normal, '\x1d'],
  ['C-~', normal, '\x1e'],
  ['C-?', normal, '?'],
  ['C-2', normal, '\x00'],
  ['C-3', normal, '\x1b'],
  ['C-4', normal, '\x1c'],
  ['C-5', normal, '\x1d'],
  ['C-6', normal, '\x1e'],
  ['C-7', normal, '\x1f'],
  ['C-8', normal, '\x7f'],
  ['C-/', normal, '\x1f'],
  ['C-1', normal, '1'],
  ['C-é', normal, '\xc3\xa9'],
  // Alt: ESC before the key's byte.
  ['A-b', normal, '\x1bb'],
  ['A-S-B', normal, '\x1bB'],
  ['A-.', normal, '\x1b.'],
  ['C-A-a', normal, '\x1b\x01'],
  ['A-Enter', normal, '\x1b\r'],
  ['A-Backspace', normal, '\x1b\x7f'],
  ['C-A-Backspace', normal, '\x1b\x08'],
  ['A-Escape', normal, '\x1b\x1b'],
  ['A-Tab', normal, '\x1b\t'],
];

test('every key of the table sends the bytes xterm sends', () => {
  for (const [description, modes, expected] of TABLE) {
    const what = `${description}${modes.applicationCursorKeys ? ' (DECCKM)' : ''}`;
    assert.equal(binary(keyBytes(key(description), modes)), expected, what);
  }
});

test('the modifier parameter is 1 + Shift 1 + Alt 2 + Ctrl 4', () => {
  assert.equal(modifierParameter({ shift: false, alt: false, ctrl: false }), 1);
  assert.equal(modifierParameter({ shift: true, alt: false, ctrl: false }), 2);
  assert.equal(modifierParameter({ shift: false, alt: true, ctrl: false }), 3);
  assert.equal(modifierParameter({ shift: false, alt: false, ctrl: true }), 5);
  assert.equal(modifierParameter({ shift: true, alt: true, ctrl: true }), 8);
});

test('Option as Meta: a composed character or a dead key under Alt is the key at its position', () => {
  // macOS: Option-b types ∫, Option-e starts a dead key, Option-3 types £.
  assert.equal(binary(keyBytes(key('A-∫', { code: 'KeyB' }), normal)), '\x1bb');
  assert.equal(binary(keyBytes(key('A-S-ı', { code: 'KeyB' }), normal)), '\x1bB');
  assert.equal(binary(keyBytes(key('A-Dead', { code: 'KeyE' }), normal)), '\x1be');
  assert.equal(binary(keyBytes(key('A-£', { code: 'Digit3' }), normal)), '\x1b3');
  // A composed character at a position that is no letter or digit goes as it is.
  assert.equal(hex(keyBytes(key('A-«', { code: 'Backslash' }), normal)), '1b c2 ab');
  // A dead key without Alt is a composition: the browser's.
  assert.equal(keyBytes(key('Dead', { code: 'KeyE' }), normal), null);
});

test('AltGr types its character: neither Ctrl nor Alt', () => {
  // A German keyboard's AltGr-q, which browsers report with ctrlKey and altKey.
  assert.equal(binary(keyBytes(key('C-A-@', { code: 'KeyQ', altGraph: true }), normal)), '@');
  assert.equal(hex(keyBytes(key('C-A-€', { code: 'KeyE', altGraph: true }), normal)), 'e2 82 ac');
  // Sticky modifiers still apply.
  assert.equal(binary(keyBytes(key('C-A-@', { code: 'KeyQ', altGraph: true }), normal, { ctrl: false, alt: true })), '\x1b@');
});

test('the keys left to the browser', () => {
  // A composition under way (IME), a phone keyboard's key (229, "Unidentified"), Cmd/Meta.
  assert.equal(keyBytes(key('a', { isComposing: true }), normal), null);
  assert.equal(keyBytes(key('Unidentified', { keyCode: 229 }), normal), null);
  assert.equal(keyBytes(key('Process', { keyCode: 229 }), normal), null);
  assert.equal(keyBytes(key('c', { metaKey: true }), normal), null);
  assert.equal(keyBytes(key('ArrowUp', { metaKey: true }), normal), null);
  // A modifier alone, and keys xterm sends nothing for.
  for (const name of ['Shift', 'Control', 'Alt', 'Meta', 'CapsLock', 'NumLock', 'ContextMenu', 'F13', 'AudioVolumeUp', 'Unidentified', '']) {
    assert.equal(keyBytes(key(name), normal), null, name);
  }
  // xterm's paste (Shift-Insert), a terminal's copy and paste (Ctrl-Shift-C, Ctrl-Shift-V).
  assert.equal(keyBytes(key('S-Insert'), normal), null);
  assert.equal(keyBytes(key('C-S-C'), normal), null);
  assert.equal(keyBytes(key('C-S-V'), normal), null);
  assert.equal(keyBytes(key('C-S-c'), normal), null);
  // Ctrl-C and Ctrl-V alone are the program's.
  assert.equal(hex(keyBytes(key('C-c'), normal)), '03');
  assert.equal(hex(keyBytes(key('C-v'), normal)), '16');
});

test('sticky Ctrl and Alt act on the next key as held ones', () => {
  const ctrl = { ctrl: true, alt: false };
  const alt = { ctrl: false, alt: true };
  const both = { ctrl: true, alt: true };
  assert.equal(hex(keyBytes(key('c'), normal, ctrl)), '03');
  assert.equal(hex(keyBytes(key('['), normal, ctrl)), '1b');
  assert.equal(binary(keyBytes(key('ArrowUp'), normal, ctrl)), '\x1b[1;5A');
  assert.equal(binary(keyBytes(key('ArrowUp'), application, alt)), '\x1b[1;3A');
  assert.equal(binary(keyBytes(key('S-ArrowUp'), normal, both)), '\x1b[1;8A');
  assert.equal(binary(keyBytes(key('f'), normal, alt)), '\x1bf');
  assert.equal(binary(keyBytes(key('x'), normal, both)), '\x1b\x18');
  assert.equal(binary(keyBytes(key('Backspace'), normal, ctrl)), '\x08');
  assert.equal(binary(keyBytes(key('F5'), normal, ctrl)), '\x1b[15;5~');
  // A sticky Ctrl does not make Ctrl-Shift-C the browser's copy: only a held one does.
  assert.equal(hex(keyBytes(key('S-C'), normal, ctrl)), '03');
  // A modifier pressed alone sends nothing (the page keeps the sticky ones for the next key).
  assert.equal(keyBytes(key('Shift'), normal, ctrl), null);
  assert.equal(binary(keyBytes(key('a'), normal, noStickyModifiers)), 'a');
});

test('a phone keyboard\'s input events', () => {
  const none = noStickyModifiers;
  /** @param {string} inputType @param {string | null} [data] @param {import('../js/xterm-keys.js').StickyModifiers} [sticky] */
  const input = (inputType, data = null, sticky = none) => binary(inputBytes({ inputType, data }, normal, sticky));
  assert.equal(input('insertText', 'a'), 'a');
  assert.equal(input('insertText', 'hello'), 'hello');
  assert.equal(hex(inputBytes({ inputType: 'insertText', data: 'é😀' }, normal)), 'c3 a9 f0 9f 98 80');
  assert.equal(input('insertText', '\n'), '\r', 'a keyboard that inserts a newline: Enter');
  assert.equal(input('insertText', 'a\r\nb'), 'a\rb');
  assert.equal(input('insertLineBreak'), '\r');
  assert.equal(input('insertParagraph'), '\r');
  assert.equal(input('deleteContentBackward'), '\x7f');
  assert.equal(input('deleteContentForward'), '\x1b[3~');
  // The sticky modifiers, on the first character only.
  assert.equal(input('insertText', 'c', { ctrl: true, alt: false }), '\x03');
  assert.equal(input('insertText', 'd', { ctrl: false, alt: true }), '\x1bd');
  assert.equal(input('insertText', 'ab', { ctrl: true, alt: false }), '\x01b');
  assert.equal(input('insertText', '😀x', { ctrl: true, alt: false }), '\xf0\x9f\x98\x80x');
  assert.equal(input('insertLineBreak', null, { ctrl: false, alt: true }), '\x1b\r');
  assert.equal(input('deleteContentBackward', null, { ctrl: true, alt: false }), '\x08');
  assert.equal(input('deleteContentForward', null, { ctrl: true, alt: false }), '\x1b[3;5~');
  // A paste typed as input, under bracketed paste.
  assert.equal(binary(inputBytes({ inputType: 'insertFromPaste', data: 'x\ny' }, bracketed)), '\x1b[200~x\ry\x1b[201~');
  // A composition under way, nothing typed, and input of other kinds: the browser's.
  assert.equal(inputBytes({ inputType: 'insertText', data: 'a', isComposing: true }, normal), null);
  assert.equal(inputBytes({ inputType: 'insertCompositionText', data: 'a' }, normal), null);
  assert.equal(input('insertText', ''), null);
  assert.equal(input('insertText', null), null);
  assert.equal(input('insertReplacementText', 'the'), null);
  assert.equal(input('formatBold'), null);
  assert.equal(input('historyUndo'), null);
});

test('a paste: line ends as CR, bracketed under DECSET 2004, the markers taken out of it', () => {
  assert.equal(binary(paste('ls -l', normal)), 'ls -l');
  assert.equal(binary(paste('ls -l', bracketed)), '\x1b[200~ls -l\x1b[201~');
  assert.equal(binary(paste('a\nb\r\nc\rd', normal)), 'a\rb\rc\rd');
  assert.equal(binary(paste('a\nb\n', bracketed)), '\x1b[200~a\rb\r\x1b[201~');
  assert.equal(hex(paste('é', bracketed)), '1b 5b 32 30 30 7e c3 a9 1b 5b 32 30 31 7e');
  // A paste that would end the bracket early and have the rest typed as keys.
  assert.equal(binary(paste('safe\x1b[201~rm -rf ~\n', bracketed)), '\x1b[200~saferm -rf ~\r\x1b[201~');
  assert.equal(binary(paste('\x1b[200~x\x1b[201~', bracketed)), '\x1b[200~x\x1b[201~');
  // Taking one marker out must not make another.
  assert.equal(binary(paste('\x1b[20\x1b[201~1~y', bracketed)), '\x1b[200~y\x1b[201~');
  assert.equal(binary(paste('\x1b\x1b[200~[201~z', normal)), 'z');
  // Other escapes are the text's own.
  assert.equal(binary(paste('\x1b[A', bracketed)), '\x1b[200~\x1b[A\x1b[201~');
  // Nothing for nothing.
  assert.equal(paste('', bracketed).length, 0);
  assert.equal(paste('\x1b[201~', bracketed).length, 0);
});
