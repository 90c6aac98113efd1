// The bytes xterm sends for the keys a browser reports, so that a program on the computer reads
// the phone's keyboard as it reads a terminal's (xterm's "Xterm Control Sequences", ctlseqs, is
// the reference: "PC-Style Function Keys" and "VT220-Style Function Keys"). Pure: a plain object
// with a KeyboardEvent's fields (or an InputEvent's), the program's modes and the on-screen key
// row's sticky modifiers in; the bytes for the session's input out, or null where the page should
// let the browser act (a composition under way, a Cmd/Meta shortcut, the terminal's own copy and
// paste keys, a key that sends nothing).
//
// - Text: its UTF-8. Enter CR, Backspace DEL (0x7F; Ctrl-Backspace BS, 0x08), Tab HT, Shift-Tab
//   `CSI Z`, Escape ESC.
// - Ctrl with a character, as X11's XLookupString makes it (xterm's own input): `@`–`~` (the
//   letters, `[ \ ] ^ _`, either case) to 0x00–0x1F by their low five bits, space and `2` NUL,
//   `3`–`7` 0x1B–0x1F, `8` DEL, `/` 0x1F; any other character as it is.
// - Alt with a single-byte key (a character, Enter, Backspace, Tab, Escape): ESC before it
//   (xterm's metaSendsEscape). With macOS's Option, which composes characters (Option-b is ∫),
//   the key's position is the character (`code` KeyB: `ESC b`), as "Option as Meta" does (so
//   too a non-Latin layout's Alt-letter: the Latin letter of its key).
// - Cursor keys, Home and End: `CSI A`… (`SS3 A`… under DECCKM, application cursor keys); the
//   editing keys `CSI 2~` Insert, `CSI 3~` Delete, `CSI 5~` PageUp, `CSI 6~` PageDown; F1–F4
//   `SS3 P`…`SS3 S`, F5–F12 `CSI 15~`, 17, 18, 19, 20, 21, 23, 24. With Shift, Alt or Ctrl, the
//   modifier parameter (1 + Shift 1 + Alt 2 + Ctrl 4) in CSI form whatever DECCKM says:
//   `CSI 1;5A` Ctrl-Up, `CSI 3;2~` Shift-Delete, `CSI 1;2P` Shift-F1, `CSI 15;5~` Ctrl-F5.
// - Sticky modifiers (Ctrl and Alt tapped on the key row) act as held ones on the next key that
//   sends bytes; the page clears them when a call returns bytes.
//
// The page should call `keyBytes` from `keydown` and, when it returns null for a key with text,
// let the `beforeinput` event come (`inputBytes`): phone keyboards report most keys as
// "Unidentified" (keyCode 229) and only their input says what was typed.

import { utf8 } from './bytes.js';

/**
 * The fields of a KeyboardEvent the mapping reads (a KeyboardEvent itself will do). `altGraph`
 * is `getModifierState('AltGraph')`: AltGr, which browsers also report as Ctrl+Alt, then types
 * the character in `key`, with neither.
 * @typedef {object} KeyInput
 * @property {string} key
 * @property {string} [code]
 * @property {boolean} [ctrlKey]
 * @property {boolean} [altKey]
 * @property {boolean} [shiftKey]
 * @property {boolean} [metaKey]
 * @property {boolean} [altGraph]
 * @property {boolean} [isComposing]
 * @property {number} [keyCode]
 */

/**
 * The fields of an InputEvent (`beforeinput`) the mapping reads.
 * @typedef {object} TextInput
 * @property {string} inputType
 * @property {string | null} [data]
 * @property {boolean} [isComposing]
 */

/**
 * Ctrl and Alt tapped on the on-screen key row: they apply to the next key.
 * @typedef {object} StickyModifiers
 * @property {boolean} ctrl
 * @property {boolean} alt
 */

/**
 * The modes the bytes depend on (ScreenModes has them).
 * @typedef {object} KeyModes
 * @property {boolean} applicationCursorKeys DECCKM
 * @property {boolean} bracketedPaste DECSET 2004
 */

/**
 * @typedef {object} Modifiers
 * @property {boolean} shift
 * @property {boolean} alt
 * @property {boolean} ctrl
 */

const ESC = 0x1b;

/** @type {StickyModifiers} */
export const noStickyModifiers = Object.freeze({ ctrl: false, alt: false });

/** Cursor keys, Home and End: their final byte, after `CSI` or (DECCKM) `SS3`. */
/** @type {Readonly<Record<string, string>>} */
const CURSOR_KEYS = Object.freeze({
  ArrowUp: 'A', ArrowDown: 'B', ArrowRight: 'C', ArrowLeft: 'D', Home: 'H', End: 'F',
});

/** The editing keys and F5–F12: `CSI n ~`. */
/** @type {Readonly<Record<string, number>>} */
const TILDE_KEYS = Object.freeze({
  Insert: 2, Delete: 3, PageUp: 5, PageDown: 6,
  F5: 15, F6: 17, F7: 18, F8: 19, F9: 20, F10: 21, F11: 23, F12: 24,
});

/** F1–F4: `SS3 P`…`SS3 S`, `CSI 1;m P`… when modified. */
/** @type {Readonly<Record<string, string>>} */
const PF_KEYS = Object.freeze({ F1: 'P', F2: 'Q', F3: 'R', F4: 'S' });

/** Key values that are names (`ArrowUp`, `Shift`, `F13`, `Unidentified`), not text. */
const NAMED_KEY = /^[A-Z][A-Za-z0-9]+$/;

/**
 * xterm's modifier parameter: 1 + Shift 1 + Alt 2 + Ctrl 4 (1 when none: then it is left out).
 * @param {Modifiers} modifiers
 * @returns {number}
 */
export function modifierParameter(modifiers) {
  return 1 + (modifiers.shift ? 1 : 0) + (modifiers.alt ? 2 : 0) + (modifiers.ctrl ? 4 : 0);
}

/**
 * @param {string} text
 * @returns {Uint8Array}
 */
const ascii = (text) => utf8(text);

/**
 * The bytes of a named key xterm sends something for; undefined for one it does not.
 * @param {string} name a KeyboardEvent key value
 * @param {Modifiers} modifiers
 * @param {KeyModes} modes
 * @returns {Uint8Array | undefined}
 */
function namedKeyBytes(name, modifiers, modes) {
  const parameter = modifierParameter(modifiers);
  /** @param {number} byte */
  const single = (byte) => new Uint8Array(modifiers.alt ? [ESC, byte] : [byte]);
  switch (name) {
    case 'Enter': return single(0x0d);
    case 'Backspace': return single(modifiers.ctrl ? 0x08 : 0x7f);
    case 'Tab': return modifiers.shift ? ascii('\x1b[Z') : single(0x09);
    case 'Escape': return single(ESC);
  }
  if (name in CURSOR_KEYS) {
    const final = CURSOR_KEYS[name];
    if (parameter > 1) return ascii(`\x1b[1;${parameter}${final}`);
    return ascii(modes.applicationCursorKeys ? `\x1bO${final}` : `\x1b[${final}`);
  }
  if (name in PF_KEYS) {
    const final = PF_KEYS[name];
    return ascii(parameter > 1 ? `\x1b[1;${parameter}${final}` : `\x1bO${final}`);
  }
  if (name in TILDE_KEYS) {
    const number = TILDE_KEYS[name];
    return ascii(parameter > 1 ? `\x1b[${number};${parameter}~` : `\x1b[${number}~`);
  }
  return undefined;
}

/**
 * A character with Ctrl, as XLookupString makes it (the module's header says how).
 * @param {string} character one code point
 * @returns {string}
 */
function controlCharacter(character) {
  const code = character.codePointAt(0) ?? 0;
  if ((code >= 0x40 && code <= 0x7e) || code === 0x20) return String.fromCharCode(code & 0x1f);
  if (character === '2') return '\x00';
  if (code >= 0x33 && code <= 0x37) return String.fromCharCode(code - 0x33 + 0x1b); // 3–7: ESC…US
  if (character === '8') return '\x7f';
  if (character === '/') return '\x1f';
  return character;
}

/**
 * Text typed with the modifiers: Ctrl on its first code point, ESC before it for Alt; LF (and
 * CR LF) as CR, what Enter sends.
 * @param {string} text
 * @param {Modifiers} modifiers
 * @returns {Uint8Array}
 */
function textBytes(text, modifiers) {
  let typed = text.replace(/\r?\n/g, '\r');
  if (modifiers.ctrl && typed !== '') {
    const first = String.fromCodePoint(typed.codePointAt(0) ?? 0);
    typed = controlCharacter(first) + typed.slice(first.length);
  }
  return utf8(modifiers.alt ? '\x1b' + typed : typed);
}

/**
 * The bytes xterm sends for a key (a `keydown`), or null when the page should let the browser
 * handle it: a composition (IME, a phone keyboard's "Unidentified" key, a dead key), Cmd/Meta,
 * a modifier alone or a key xterm sends nothing for, Shift-Insert (xterm's paste), and
 * Ctrl-Shift-C / Ctrl-Shift-V (a terminal's copy and paste). When it returns bytes, the page
 * prevents the browser's default and clears the sticky modifiers.
 * @param {KeyInput} event
 * @param {KeyModes} modes
 * @param {StickyModifiers} [sticky]
 * @returns {Uint8Array | null}
 */
export function keyBytes(event, modes, sticky = noStickyModifiers) {
  if (event.isComposing || event.keyCode === 229 || event.metaKey) return null;
  const key = event.key;
  const altGraph = event.altGraph === true;
  const shift = event.shiftKey === true;
  const heldCtrl = !altGraph && event.ctrlKey === true;
  const heldAlt = !altGraph && event.altKey === true;
  /** @type {Modifiers} */
  const modifiers = { shift, ctrl: heldCtrl || sticky.ctrl, alt: heldAlt || sticky.alt };
  if (key === 'Insert' && shift && !heldCtrl && !heldAlt) return null;
  if (heldCtrl && shift && /^[cvCV]$/.test(key)) return null;

  // Option as Meta: macOS's Option composes (or starts a dead key); the key's position says
  // which key it was.
  if (heldAlt && (key === 'Dead' || (!/^[\x20-\x7e]$/.test(key) && !NAMED_KEY.test(key)))) {
    const position = /^(?:Key([A-Z])|Digit([0-9]))$/.exec(event.code ?? '');
    if (position !== null) {
      const base = position[1] !== undefined ? (shift ? position[1] : position[1].toLowerCase()) : position[2];
      return textBytes(base, modifiers);
    }
  }
  if (key === '' || NAMED_KEY.test(key) || key === 'Dead') {
    return namedKeyBytes(key, modifiers, modes) ?? null;
  }
  return textBytes(key, modifiers);
}

/**
 * The bytes for text a phone keyboard gives as input rather than keys (a `beforeinput` event):
 * `insertText` its text (the sticky modifiers on its first character), `insertLineBreak` and
 * `insertParagraph` Enter, `deleteContentBackward` Backspace, `deleteContentForward` Delete,
 * `insertFromPaste` a paste; null for a composition under way and any other input.
 * @param {TextInput} event
 * @param {KeyModes} modes
 * @param {StickyModifiers} [sticky]
 * @returns {Uint8Array | null}
 */
export function inputBytes(event, modes, sticky = noStickyModifiers) {
  if (event.isComposing) return null;
  /** @type {Modifiers} */
  const modifiers = { shift: false, ctrl: sticky.ctrl, alt: sticky.alt };
  const data = event.data ?? '';
  switch (event.inputType) {
    case 'insertText':
      return data === '' ? null : textBytes(data, modifiers);
    case 'insertLineBreak':
    case 'insertParagraph':
      return namedKeyBytes('Enter', modifiers, modes) ?? null;
    case 'deleteContentBackward':
      return namedKeyBytes('Backspace', modifiers, modes) ?? null;
    case 'deleteContentForward':
      return namedKeyBytes('Delete', modifiers, modes) ?? null;
    case 'insertFromPaste':
      return data === '' ? null : paste(data, modes);
    default:
      return null;
  }
}

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

/**
 * The bytes of pasted text: its line ends as CR (what Enter sends, as xterm pastes them), and
 * under bracketed paste (DECSET 2004) between `CSI 200~` and `CSI 201~`. Those two markers are
 * taken out of the text whatever the mode, until none is left (one taken out must not make
 * another), so that a paste cannot end the bracket early and be typed as keys. Nothing for "".
 * @param {string} text
 * @param {KeyModes} modes
 * @returns {Uint8Array}
 */
export function paste(text, modes) {
  let body = text.replace(/\r\n|\n/g, '\r');
  for (;;) {
    const stripped = body.split(PASTE_START).join('').split(PASTE_END).join('');
    if (stripped === body) break;
    body = stripped;
  }
  if (body === '') return new Uint8Array(0);
  return utf8(modes.bracketedPaste ? PASTE_START + body + PASTE_END : body);
}
