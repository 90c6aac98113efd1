// The terminal on the page: a screen session's screens drawn as rows of styled spans (from
// ScreenViewModel, only the rows that changed), the cursor over them, and the keyboard: a
// hidden text field takes the phone's keyboard (its input method, paste) and a key event's bytes
// are xterm's (xterm-keys.js). The DOM side of ScreenPainter: nothing here knows the channel.

import { ScreenViewModel } from './screen-view-model.js';
import { keyBytes, inputBytes, paste, noStickyModifiers } from './xterm-keys.js';

/** @typedef {import('./terminal-screen.js').TerminalScreen} TerminalScreen */
/** @typedef {import('./echo-predictor.js').EchoOverlay} EchoOverlay */
/** @typedef {import('./screen-view-model.js').ScreenViewModel} ViewModel */
/** @typedef {import('./screen-view-model.js').ViewRow} ViewRow */
/** @typedef {import('./xterm-keys.js').StickyModifiers} StickyModifiers */
/** @typedef {import('./xterm-keys.js').KeyModes} KeyModes */

/**
 * @typedef {object} TerminalViewOptions
 * @property {(bytes: Uint8Array) => void} onInput what the person typed, as the bytes a terminal sends
 * @property {() => StickyModifiers} [sticky] the key row's Ctrl and Alt for the next key
 * @property {() => void} [onStickyUsed] a key took the sticky modifiers: the key row lets go of them
 */

export class TerminalView {
  #screen;
  #cursor;
  #keyboard;
  #options;
  /** @type {ViewModel | null} */
  #model = null;
  /** @type {KeyModes} */
  #modes = { applicationCursorKeys: false, bracketedPaste: false };
  #cell = { width: 0, height: 0 };
  #composing = false;

  /**
   * @param {HTMLElement} container an empty element the terminal fills
   * @param {TerminalViewOptions} options
   */
  constructor(container, options) {
    this.#options = options;
    const document = container.ownerDocument;
    this.#screen = document.createElement('div');
    this.#screen.className = 'screen';
    this.#screen.setAttribute('role', 'log');
    this.#screen.setAttribute('aria-label', 'Terminal screen');
    this.#screen.setAttribute('aria-live', 'off');
    this.#cursor = document.createElement('div');
    this.#cursor.className = 'cursor';
    this.#cursor.setAttribute('aria-hidden', 'true');
    this.#keyboard = document.createElement('textarea');
    this.#keyboard.className = 'keyboard';
    this.#keyboard.setAttribute('aria-label', 'Type into the terminal');
    for (const [name, value] of [['autocapitalize', 'off'], ['autocomplete', 'off'], ['autocorrect', 'off'],
      ['spellcheck', 'false'], ['enterkeyhint', 'send'], ['rows', '1']]) {
      this.#keyboard.setAttribute(name, value);
    }
    container.append(this.#screen, this.#cursor, this.#keyboard);
    container.addEventListener('click', () => this.focus());
    this.#keyboard.addEventListener('keydown', (event) => this.#keyDown(event));
    this.#keyboard.addEventListener('beforeinput', (event) => this.#beforeInput(event));
    this.#keyboard.addEventListener('compositionstart', () => { this.#composing = true; });
    this.#keyboard.addEventListener('compositionend', (event) => {
      this.#composing = false;
      this.#keyboard.value = '';
      if (event.data) this.#send(new TextEncoder().encode(event.data));
    });
    this.#keyboard.addEventListener('paste', (event) => {
      event.preventDefault();
      const text = event.clipboardData?.getData('text/plain') ?? '';
      if (text) this.#send(paste(text, this.#modes));
    });
  }

  /** Puts the phone's keyboard up. */
  focus() {
    this.#keyboard.focus({ preventScroll: true });
  }

  /**
   * The rows and columns that fit the container at the screen's font.
   * @returns {{cols: number, rows: number}}
   */
  measure() {
    const probe = this.#screen.ownerDocument.createElement('span');
    probe.className = 'probe';
    probe.textContent = 'W'.repeat(40);
    this.#screen.append(probe);
    const box = probe.getBoundingClientRect();
    probe.remove();
    this.#cell = { width: box.width / 40, height: box.height };
    const area = this.#screen.parentElement?.getBoundingClientRect() ?? box;
    return {
      cols: Math.max(20, Math.min(1000, Math.floor(area.width / Math.max(1, this.#cell.width)))),
      rows: Math.max(5, Math.min(1000, Math.floor(area.height / Math.max(1, this.#cell.height)))),
    };
  }

  /**
   * Draws `screen` (with the echo predictor's guesses over it): only the rows that changed.
   * @param {TerminalScreen} screen
   * @param {EchoOverlay | null} [predictions]
   */
  draw(screen, predictions = null) {
    this.#modes = {
      applicationCursorKeys: screen.modes.applicationCursorKeys, bracketedPaste: screen.modes.bracketedPaste,
    };
    const model = ScreenViewModel.make(screen, predictions ? { predictions } : {});
    const changed = ScreenViewModel.changedRows(this.#model, model);
    const rows = this.#screen.children;
    while (rows.length > model.rows) rows[rows.length - 1].remove();
    while (rows.length < model.rows) {
      const row = this.#screen.ownerDocument.createElement('div');
      row.className = 'row';
      this.#screen.append(row);
    }
    for (const index of changed) this.#drawRow(/** @type {HTMLElement} */ (rows[index]), model.lines[index]);
    this.#screen.style.color = model.foreground;
    this.#screen.style.backgroundColor = model.background;
    const cursor = model.cursor;
    this.#cursor.hidden = !cursor.visible;
    this.#cursor.style.transform =
      `translate(${cursor.column * this.#cell.width}px, ${cursor.row * this.#cell.height}px)`;
    this.#cursor.style.width = `${cursor.cells * this.#cell.width}px`;
    this.#cursor.style.height = `${this.#cell.height}px`;
    this.#model = model;
  }

  /** The screen's text, row by row (for a screen reader's summary and the tests). */
  get text() {
    return Array.from(this.#screen.children, (row) => row.textContent ?? '').join('\n');
  }

  /**
   * @param {HTMLElement} element
   * @param {ViewRow} row
   */
  #drawRow(element, row) {
    const spans = row.spans.map((part) => {
      const span = element.ownerDocument.createElement('span');
      span.textContent = part.text;
      if (part.className) span.className = part.className;
      // Through the CSSOM, which a style-src 'self' policy allows (style attributes it does not).
      if (part.style) span.style.cssText = part.style;
      return span;
    });
    element.replaceChildren(...spans);
  }

  /** @param {KeyboardEvent} event */
  #keyDown(event) {
    if (event.isComposing || this.#composing) return;
    const sticky = this.#options.sticky?.() ?? noStickyModifiers;
    const bytes = keyBytes({
      key: event.key, code: event.code, ctrlKey: event.ctrlKey, altKey: event.altKey, shiftKey: event.shiftKey,
      metaKey: event.metaKey, altGraph: event.getModifierState('AltGraph'), isComposing: event.isComposing,
      keyCode: event.keyCode,
    }, this.#modes, sticky);
    if (!bytes) return;
    event.preventDefault();
    if (sticky.ctrl || sticky.alt) this.#options.onStickyUsed?.();
    this.#send(bytes);
  }

  /** @param {InputEvent} event */
  #beforeInput(event) {
    if (event.isComposing || this.#composing) return;
    const sticky = this.#options.sticky?.() ?? noStickyModifiers;
    const bytes = inputBytes({ inputType: event.inputType, data: event.data, isComposing: event.isComposing },
      this.#modes, sticky);
    if (!bytes) return;
    event.preventDefault();
    if (sticky.ctrl || sticky.alt) this.#options.onStickyUsed?.();
    this.#send(bytes);
  }

  /** @param {Uint8Array} bytes */
  #send(bytes) {
    if (bytes.length > 0) this.#options.onInput(bytes);
  }

  /**
   * Bytes from the key row (Esc, Tab, the arrows, Ctrl-C), as the keyboard would send them.
   * @param {string} key a KeyboardEvent key value (`Escape`, `Tab`, `ArrowUp`…) or one character
   * @param {{ctrl?: boolean}} [modifiers]
   */
  pressKey(key, modifiers = {}) {
    const bytes = keyBytes({ key, ctrlKey: modifiers.ctrl ?? false }, this.#modes, this.#options.sticky?.() ?? noStickyModifiers);
    if (bytes) {
      this.#options.onStickyUsed?.();
      this.#send(bytes);
    }
    this.focus();
  }
}
