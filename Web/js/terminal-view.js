// The terminal on the page: a screen session's screens drawn as rows of styled spans (from
// ScreenViewModel, only the rows that changed), the cursor over them, and the keyboard: a
// hidden text field takes the phone's keyboard (its input method, paste) and a key event's bytes
// are xterm's (xterm-keys.js). The DOM side of ScreenPainter: nothing here knows the channel.
//
// Scrollback: the lines a ScrollbackHistory holds are rows above the screen in one scrolling
// element, so a swipe down (or the mouse wheel) scrolls into them; near the top of what is held
// it asks for more (`onScrollbackWanted('older')`), and on leaving the live screen for what
// scrolled off since (`'newer'`). Scrolled back, the view stays on what the person reads: new
// screens and lines do not move it (lines added or dropped above it are made up for), a button
// goes back to the live screen, and typing does. The rows hold only the history's lines.

import { ScreenViewModel } from './screen-view-model.js';
import { keyBytes, inputBytes, paste, noStickyModifiers } from './xterm-keys.js';

/** @typedef {import('./terminal-screen.js').TerminalScreen} TerminalScreen */
/** @typedef {import('./echo-predictor.js').EchoOverlay} EchoOverlay */
/** @typedef {import('./screen-view-model.js').ScreenViewModel} ViewModel */
/** @typedef {import('./screen-view-model.js').ViewRow} ViewRow */
/** @typedef {import('./xterm-keys.js').StickyModifiers} StickyModifiers */
/** @typedef {import('./xterm-keys.js').KeyModes} KeyModes */
/** @typedef {import('./scrollback-history.js').ScrollbackHistory} ScrollbackHistory */
/** @typedef {import('./screen-cell.js').ScreenCell} ScreenCell */

/**
 * @typedef {object} TerminalViewOptions
 * @property {(bytes: Uint8Array) => void} onInput what the person typed, as the bytes a terminal sends
 * @property {() => StickyModifiers} [sticky] the key row's Ctrl and Alt for the next key
 * @property {() => void} [onStickyUsed] a key took the sticky modifiers: the key row lets go of them
 * @property {(direction: 'older' | 'newer') => void} [onScrollbackWanted] the person scrolled back:
 *   near the top of the lines held (`older`), or away from the live screen (`newer`: what
 *   scrolled off since); called again as they go on scrolling, so the history says no while one is asked
 */

/** What the top of the history says: why no older line shows above (not terminal text). */
const EDGE = Object.freeze({
  more: 'Older lines load as you scroll up',
  loading: 'Loading older lines…',
  oldest: 'The oldest line the computer keeps',
  none: 'No lines have scrolled off the screen yet',
});

/**
 * How the history rows drawn (`count` of them from line `drawn`) become the lines held (`length`
 * from line `first`): the rows dropped at the top and the bottom, the lines added at the top and
 * the bottom; null when no row stays (all are drawn anew).
 * @param {bigint | null} drawn
 * @param {number} count
 * @param {bigint | null} first
 * @param {number} length
 * @returns {{dropTop: number, dropBottom: number, addTop: number, addBottom: number} | null}
 */
function historyChange(drawn, count, first, length) {
  if (drawn === null || first === null) return null;
  const drawnEnd = drawn + BigInt(count);
  const end = first + BigInt(length);
  if (first >= drawnEnd || drawn >= end) return null;
  const over = (/** @type {bigint} */ a, /** @type {bigint} */ b) => (a > b ? Number(a - b) : 0);
  return { dropTop: over(first, drawn), dropBottom: over(drawnEnd, end), addTop: over(drawn, first), addBottom: over(end, drawnEnd) };
}

export class TerminalView {
  #screen;
  #cursor;
  #keyboard;
  #options;
  #scroller;
  #edge;
  #history;
  #live;
  #toLive;
  /** @type {bigint | null} the number of the first history row drawn */
  #historyFirst = null;
  /** On the live screen: kept at the bottom as screens and lines come. */
  #following = true;
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
    this.#scroller = document.createElement('div');
    this.#scroller.className = 'scroller';
    this.#edge = document.createElement('div');
    this.#edge.className = 'history-edge';
    this.#edge.textContent = EDGE.more;
    this.#history = document.createElement('div');
    this.#history.className = 'history';
    this.#history.setAttribute('role', 'log');
    this.#history.setAttribute('aria-label', 'Terminal scrollback');
    this.#history.setAttribute('aria-live', 'off');
    this.#live = document.createElement('div');
    this.#live.className = 'live';
    this.#toLive = document.createElement('button');
    this.#toLive.type = 'button';
    this.#toLive.className = 'to-live';
    this.#toLive.setAttribute('aria-label', 'Back to the live screen');
    this.#toLive.textContent = '↓ Live';
    this.#toLive.hidden = true;
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
    this.#live.append(this.#screen, this.#cursor);
    this.#scroller.append(this.#edge, this.#history, this.#live);
    container.append(this.#scroller, this.#toLive, this.#keyboard);
    container.addEventListener('click', () => {
      // Text the person selected (to copy it) stays selected: the keyboard would take it.
      const selection = document.getSelection();
      if (selection !== null && !selection.isCollapsed && this.#scroller.contains(selection.anchorNode)) return;
      this.focus();
    });
    // As the key row: the button neither takes the keyboard's focus nor brings the keyboard up.
    this.#toLive.addEventListener('pointerdown', (event) => event.preventDefault());
    this.#toLive.addEventListener('click', (event) => {
      event.stopPropagation();
      this.scrollToLive();
    });
    this.#scroller.addEventListener('scroll', () => this.#scrolled(), { passive: true });
    // The phone's keyboard coming up shrinks the view: the live screen stays at the bottom.
    if (typeof ResizeObserver === 'function') {
      new ResizeObserver(() => { if (this.#following) this.#pin(); }).observe(this.#scroller);
    }
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
    // The scrolling element's inside: without a scroll bar's gutter, which the history brings.
    const area = { width: this.#scroller.clientWidth, height: this.#scroller.clientHeight };
    if (this.#following) this.#pin();
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
    // Scrolled back, a new screen changes rows below what the person reads, never where they are.
    if (this.#following) this.#pin();
  }

  /** The screen's text, row by row (for a screen reader's summary and the tests). */
  get text() {
    return Array.from(this.#screen.children, (row) => row.textContent ?? '').join('\n');
  }

  /** The history's text, row by row, oldest first. */
  get historyText() {
    return Array.from(this.#history.children, (row) => row.textContent ?? '').join('\n');
  }

  /** Whether the person scrolled away from the live screen. */
  get scrolledBack() {
    return !this.#following;
  }

  /** Scrolled back to within a screen of the top of the lines held: older ones are wanted. */
  get wantsOlder() {
    return !this.#following && this.#scroller.scrollTop <= this.#scroller.clientHeight;
  }

  /**
   * Draws the history's lines above the screen: only the rows that came or went (a line's
   * cells never change once it scrolled off). Scrolled back, what the person sees stays put.
   * @param {ScrollbackHistory} history
   */
  drawHistory(history) {
    const lines = history.lines;
    const rows = this.#history.children;
    const change = historyChange(this.#historyFirst, rows.length, history.first, lines.length);
    // The anchor: the first row kept through the change (else the screen), whose place on the
    // page the scroll position keeps.
    const anchor = this.#following ? null : change !== null ? rows[change.dropTop] : this.#live;
    const anchorTop = anchor?.getBoundingClientRect().top ?? 0;
    if (change === null) {
      this.#history.replaceChildren(...lines.map((cells) => this.#historyRow(cells)));
    } else {
      for (let row = 0; row < change.dropTop; row++) rows[0].remove();
      for (let row = 0; row < change.dropBottom; row++) rows[rows.length - 1].remove();
      this.#history.prepend(...lines.slice(0, change.addTop).map((cells) => this.#historyRow(cells)));
      this.#history.append(...lines.slice(lines.length - change.addBottom).map((cells) => this.#historyRow(cells)));
    }
    this.#historyFirst = history.first;
    this.#edge.textContent = history.loadingOlder ? EDGE.loading
      : history.reachedOldest ? (lines.length === 0 ? EDGE.none : EDGE.oldest) : EDGE.more;
    if (anchor) this.#scroller.scrollTop += anchor.getBoundingClientRect().top - anchorTop;
    else this.#pin();
  }

  /** Back to the live screen, at the bottom. */
  scrollToLive() {
    this.#following = true;
    this.#toLive.hidden = true;
    this.#pin();
  }

  /** Keeps the view at the bottom: the live screen. */
  #pin() {
    this.#scroller.scrollTop = this.#scroller.scrollHeight;
  }

  /** The person scrolled (or the page did): left the live screen, came back, neared the top. */
  #scrolled() {
    const scroller = this.#scroller;
    // Half a row of slack: a scroll position is not always a whole pixel.
    const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight <= Math.max(2, this.#cell.height / 2);
    if (atBottom !== this.#following) {
      this.#following = atBottom;
      this.#toLive.hidden = atBottom;
      if (!atBottom) this.#options.onScrollbackWanted?.('newer');
    }
    if (this.wantsOlder) this.#options.onScrollbackWanted?.('older');
  }

  /**
   * One line of the history as a row: drawn as a screen's row is.
   * @param {readonly ScreenCell[]} cells
   */
  #historyRow(cells) {
    const element = this.#history.ownerDocument.createElement('div');
    element.className = 'row';
    this.#drawRow(element, ScreenViewModel.row(cells));
    return element;
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
    if (bytes.length === 0) return;
    this.scrollToLive(); // typing is at the live screen, where its echo shows
    this.#options.onInput(bytes);
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
