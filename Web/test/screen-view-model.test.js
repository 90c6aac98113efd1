// The render model of a screen (screen-view-model.js): colours (the 16 as CSS variables with
// xterm's defaults, the 256-colour table at indexes whose values xterm documents, RGB),
// attributes as classes, reverse video of a cell and of the screen, wide characters and their
// halves, combining characters, the cursor, the echo predictor's guesses, and the rows that
// changed between two models; then seeded random rows: spans cover every column once, and two
// rows have one key exactly when they draw the same.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScreenViewModel } from '../js/screen-view-model.js';
import { EchoPredictor } from '../js/echo-predictor.js';
import { ScreenCell } from '../js/screen-cell.js';
import { CellStyle } from '../js/cell-style.js';
import { TerminalColor } from '../js/terminal-color.js';
import { TerminalScreen } from '../js/terminal-screen.js';
import { ScreenModes } from '../js/screen-modes.js';
import { seededRandom } from '../test-support/support.js';

/** @typedef {import('../js/screen-view-model.js').ViewSpan} ViewSpan */

/**
 * A screen of `rows`' cells, `columns` wide (blank after them).
 * @param {ScreenCell[][]} rows
 * @param {{columns?: number, cursor?: [number, number], visible?: boolean, modes?: Partial<ScreenModes>}} [options]
 * @returns {TerminalScreen}
 */
function screenOf(rows, options = {}) {
  const columns = options.columns ?? 10;
  const lines = rows.map((cells) => [...cells, ...new Array(columns - cells.length).fill(ScreenCell.blank)]);
  const [row, column] = options.cursor ?? [0, 0];
  return TerminalScreen.make(lines, { row, column, visible: options.visible ?? true }, ScreenModes.make(options.modes));
}

/** @param {string} text @param {CellStyle} [style] @returns {ScreenCell[]} */
const plain = (text, style = CellStyle.plain) => Array.from(text, (character) => ScreenCell.make(character, 1, style));

/** @param {string} text @param {CellStyle} [style] @returns {ScreenCell[]} a wide character's two halves */
const wide = (text, style = CellStyle.plain) => [ScreenCell.make(text, 2, style), ScreenCell.make('', 0, style)];

/** @param {ViewSpan[]} spans @returns {[number, number, string, string, string][]} */
const brief = (spans) => spans.map((span) => [span.column, span.cells, span.text, span.className, span.style]);

/** @param {number} index @returns {string} */
const paletteVariable = (index) => `var(--term-color-${index}, ${ScreenViewModel.paletteHex[index]})`;

test('the 16 colours are variables with xterm\'s defaults; the 256-colour table is xterm\'s', () => {
  // xterm's color0–color15.
  assert.deepEqual([...ScreenViewModel.paletteHex.slice(0, 16)], [
    '#000000', '#cd0000', '#00cd00', '#cdcd00', '#0000ee', '#cd00cd', '#00cdcd', '#e5e5e5',
    '#7f7f7f', '#ff0000', '#00ff00', '#ffff00', '#5c5cff', '#ff00ff', '#00ffff', '#ffffff',
  ]);
  // The cube (16–231: 0, 95, 135, 175, 215, 255) and the grey ramp (232–255: 8 to 238).
  /** @type {[number, string][]} */
  const known = [
    [16, '#000000'], [17, '#00005f'], [21, '#0000ff'], [46, '#00ff00'], [67, '#5f87af'], [88, '#870000'],
    [124, '#af0000'], [160, '#d70000'], [196, '#ff0000'], [208, '#ff8700'], [226, '#ffff00'], [231, '#ffffff'],
    [232, '#080808'], [244, '#808080'], [250, '#bcbcbc'], [255, '#eeeeee'],
  ];
  for (const [index, value] of known) assert.equal(ScreenViewModel.paletteHex[index], value, `colour ${index}`);
  assert.deepEqual(ScreenViewModel.paletteRGB(110), [0x87, 0xaf, 0xd7]);
  assert.equal(ScreenViewModel.paletteHex.length, 256);
  assert.throws(() => ScreenViewModel.paletteRGB(256), RangeError);
  // In spans: the first 16 as variables (themeable), the others as values, RGB as it is.
  const style = (/** @type {TerminalColor} */ foreground, /** @type {TerminalColor} */ background) =>
    CellStyle.make({ foreground, background });
  const screen = screenOf([[
    ...plain('a', style(TerminalColor.indexed(1), TerminalColor.default)),
    ...plain('b', style(TerminalColor.indexed(9), TerminalColor.indexed(4))),
    ...plain('c', style(TerminalColor.indexed(196), TerminalColor.indexed(244))),
    ...plain('d', style(TerminalColor.rgb(10, 20, 30), TerminalColor.rgb(255, 128, 0))),
    ...plain('e', style(TerminalColor.default, TerminalColor.indexed(0))),
  ]]);
  const model = ScreenViewModel.make(screen);
  assert.deepEqual(brief(model.lines[0].spans), [
    [0, 1, 'a', '', `color:${paletteVariable(1)}`],
    [1, 1, 'b', '', `color:${paletteVariable(9)};background-color:${paletteVariable(4)}`],
    [2, 1, 'c', '', 'color:#ff0000;background-color:#808080'],
    [3, 1, 'd', '', 'color:#0a141e;background-color:#ff8000'],
    [4, 1, 'e', '', `background-color:${paletteVariable(0)}`],
    [5, 5, '     ', '', ''],
  ]);
  assert.equal(model.foreground, 'var(--term-fg)');
  assert.equal(model.background, 'var(--term-bg)');
  assert.equal(model.reverseVideo, false);
});

test('attributes are classes; a run of one style is one span', () => {
  const { flags } = CellStyle;
  const screen = screenOf([[
    ...plain('ab', CellStyle.make({ flags: flags.bold })),
    ...plain('c', CellStyle.make({ flags: flags.italic | flags.strike })),
    ...plain('d', CellStyle.make({ underline: 'single' })),
    ...plain('e', CellStyle.make({ underline: 'double' })),
    ...plain('f', CellStyle.make({ underline: 'curly', flags: flags.blink })),
    ...plain('g', CellStyle.make({ flags: flags.bold | flags.italic | flags.blink | flags.strike, underline: 'single' })),
  ]]);
  assert.deepEqual(brief(ScreenViewModel.make(screen).lines[0].spans), [
    [0, 2, 'ab', 't-bold', ''],
    [2, 1, 'c', 't-italic t-strike', ''],
    [3, 1, 'd', 't-underline', ''],
    [4, 1, 'e', 't-underline-double', ''],
    [5, 1, 'f', 't-underline-curly t-blink', ''],
    [6, 1, 'g', 't-bold t-italic t-underline t-strike t-blink', ''],
    [7, 3, '   ', '', ''],
  ]);
  // Styles that are equal but not the same object are one span too.
  const twice = screenOf([[...plain('x', CellStyle.make({ flags: flags.bold })), ...plain('y', CellStyle.make({ flags: flags.bold }))]],
    { columns: 2 });
  assert.deepEqual(brief(ScreenViewModel.make(twice).lines[0].spans), [[0, 2, 'xy', 't-bold', '']]);
});

test('empty cells are spaces, so that columns line up', () => {
  const screen = screenOf([plain('a'), []], { columns: 6 });
  const lines = [...screen.lines[0]];
  lines[3] = ScreenCell.make('b');
  screen.lines[0] = lines;
  const model = ScreenViewModel.make(screen);
  assert.deepEqual(brief(model.lines[0].spans), [[0, 6, 'a  b  ', '', '']]);
  assert.deepEqual(brief(model.lines[1].spans), [[0, 6, '      ', '', '']]);
  assert.equal(model.rows, 2);
  assert.equal(model.columns, 6);
});

test('reverse video swaps a cell\'s colours; the screen\'s swaps the defaults', () => {
  const reverse = CellStyle.flags.reverse;
  const cells = [
    ...plain('a', CellStyle.make({ flags: reverse })),
    ...plain('b', CellStyle.make({ flags: reverse, foreground: TerminalColor.indexed(1) })),
    ...plain('c', CellStyle.make({ flags: reverse, background: TerminalColor.rgb(1, 2, 3) })),
    ...plain('d'),
  ];
  const model = ScreenViewModel.make(screenOf([cells], { columns: 4 }));
  assert.deepEqual(brief(model.lines[0].spans), [
    [0, 1, 'a', '', 'color:var(--term-bg);background-color:var(--term-fg)'],
    [1, 1, 'b', '', `color:var(--term-bg);background-color:${paletteVariable(1)}`],
    [2, 1, 'c', '', 'color:#010203;background-color:var(--term-fg)'],
    [3, 1, 'd', '', ''],
  ]);
  // DECSCNM: the screen's colours are swapped; a plain cell takes them, a reversed one the others.
  const screenWide = ScreenViewModel.make(screenOf([cells], { columns: 4, modes: { reverseVideo: true } }));
  assert.equal(screenWide.reverseVideo, true);
  assert.equal(screenWide.foreground, 'var(--term-bg)');
  assert.equal(screenWide.background, 'var(--term-fg)');
  assert.deepEqual(brief(screenWide.lines[0].spans), [
    [0, 1, 'a', '', 'color:var(--term-fg);background-color:var(--term-bg)'],
    [1, 1, 'b', '', `color:var(--term-fg);background-color:${paletteVariable(1)}`],
    [2, 1, 'c', '', 'color:#010203;background-color:var(--term-bg)'],
    [3, 1, 'd', '', ''],
  ]);
});

test('a wide character covers two cells, its right half no text; a combining character is one cell', () => {
  const bold = CellStyle.make({ flags: CellStyle.flags.bold });
  const cells = [...plain('a'), ...wide('日'), ...wide('本', bold), ScreenCell.make('e\u0301'), ...wide('😀'), ...plain('z')];
  const model = ScreenViewModel.make(screenOf([cells], { columns: 10 }));
  assert.deepEqual(brief(model.lines[0].spans), [
    [0, 1, 'a', '', ''],
    [1, 2, '日', 't-wide', ''],
    [3, 2, '本', 't-bold t-wide', ''],
    [5, 1, 'e\u0301', '', ''],
    [6, 2, '😀', 't-wide', ''],
    [8, 2, 'z ', '', ''],
  ]);
  // Half a wide character is a space: a right half alone, a wide character in the last column.
  const halves = [ScreenCell.make('', 0), ...plain('b'), ScreenCell.make('', 0), ...plain('c'), ScreenCell.make('日', 2),
    ...plain('d'), ScreenCell.make('本', 2)];
  assert.deepEqual(brief(ScreenViewModel.make(screenOf([halves], { columns: 7 })).lines[0].spans), [[0, 7, ' b c d ', '', '']]);
});

test('the cursor: its place, its visibility, a wide character under it', () => {
  const cells = [...plain('ab'), ...wide('日'), ...plain('c')];
  const at = (/** @type {number} */ column, visible = true) =>
    ScreenViewModel.make(screenOf([cells, []], { columns: 6, cursor: [0, column], visible })).cursor;
  assert.deepEqual(at(1), { row: 0, column: 1, visible: true, cells: 1, text: 'b' });
  assert.deepEqual(at(2), { row: 0, column: 2, visible: true, cells: 2, text: '日' });
  assert.deepEqual(at(3), { row: 0, column: 2, visible: true, cells: 2, text: '日' }, 'on the right half');
  assert.deepEqual(at(5, false), { row: 0, column: 5, visible: false, cells: 1, text: ' ' });
  // Held within the screen.
  const outside = ScreenViewModel.make(screenOf([cells, []], { columns: 6, cursor: [7, 9] })).cursor;
  assert.deepEqual([outside.row, outside.column], [1, 5]);
});

test('the echo predictor\'s guesses: underlined, marked, the cursor after them', () => {
  const predictor = new EchoPredictor('always');
  const screen = screenOf([plain('$ ')], { columns: 8, cursor: [0, 2] });
  predictor.received({ screen, inputBytes: 0n }, 0);
  predictor.typed([0x6c, 0x73], 1); // ls
  const model = ScreenViewModel.make(screen, { predictions: predictor.overlay });
  assert.deepEqual(brief(model.lines[0].spans), [
    [0, 2, '$ ', '', ''],
    [2, 2, 'ls', 't-underline t-predicted', ''],
    [4, 4, '    ', '', ''],
  ]);
  assert.equal(model.cursor.column, 4);
  // The predictor's display is the same screen; only the mark differs.
  const display = predictor.display;
  assert.ok(display !== null);
  assert.deepEqual(brief(ScreenViewModel.make(display).lines[0].spans)[1], [2, 2, 'ls', 't-underline', '']);
  // Without predictions, or with none shown, the computer's screen.
  const bare = ScreenViewModel.make(screen, { predictions: null });
  assert.deepEqual(brief(bare.lines[0].spans), [[0, 8, '$       ', '', '']]);
  assert.equal(bare.cursor.column, 2);
  assert.deepEqual(ScreenViewModel.make(screen, { predictions: { cells: [], cursor: null } }), bare);
  assert.deepEqual(ScreenViewModel.changedRows(bare, model), [0]);
});

test('changed rows: those whose key changed, every row after a change of size or colours', () => {
  const first = screenOf([plain('one'), plain('two'), plain('three')], { columns: 8 });
  const before = ScreenViewModel.make(first);
  assert.deepEqual(ScreenViewModel.changedRows(null, before), [0, 1, 2]);
  // The same cells in new objects: nothing to draw.
  const again = ScreenViewModel.make(screenOf([plain('one'), plain('two'), plain('three')], { columns: 8, cursor: [2, 5] }));
  assert.deepEqual(ScreenViewModel.changedRows(before, again), []);
  assert.equal(again.lines[1].key, before.lines[1].key);
  // A character; a style only; the cursor alone changes no row.
  const typed = ScreenViewModel.make(screenOf([plain('one'), plain('tw0'), plain('three')], { columns: 8 }));
  assert.deepEqual(ScreenViewModel.changedRows(before, typed), [1]);
  const styled = ScreenViewModel.make(screenOf([plain('one'), plain('two'),
    plain('three', CellStyle.make({ foreground: TerminalColor.indexed(2) }))], { columns: 8 }));
  assert.deepEqual(ScreenViewModel.changedRows(before, styled), [2]);
  const underlined = ScreenViewModel.make(screenOf([plain('one', CellStyle.make({ underline: 'double' })), plain('two'),
    plain('three')], { columns: 8 }));
  assert.deepEqual(ScreenViewModel.changedRows(before, underlined), [0]);
  // Another size, the screen's reverse video: everything.
  const wider = ScreenViewModel.make(screenOf([plain('one'), plain('two'), plain('three')], { columns: 9 }));
  assert.deepEqual(ScreenViewModel.changedRows(before, wider), [0, 1, 2]);
  const taller = ScreenViewModel.make(screenOf([plain('one'), plain('two'), plain('three'), []], { columns: 8 }));
  assert.deepEqual(ScreenViewModel.changedRows(before, taller), [0, 1, 2, 3]);
  const reversed = ScreenViewModel.make(screenOf([plain('one'), plain('two'), plain('three')],
    { columns: 8, modes: { reverseVideo: true } }));
  assert.deepEqual(ScreenViewModel.changedRows(before, reversed), [0, 1, 2]);
  // A span's text that looks like another's parts does not make a key of another row.
  const tricky = ScreenViewModel.row([...plain('1:a'), ...plain('b', CellStyle.make({ flags: CellStyle.flags.bold }))]);
  const other = ScreenViewModel.row([...plain('1'), ...plain(':ab', CellStyle.make({ flags: CellStyle.flags.bold }))]);
  assert.notEqual(tricky.key, other.key);
});

test('random rows: spans cover every column once, and keys are equal exactly when rows draw alike', () => {
  const random = seededRandom(43);
  const styles = [
    CellStyle.plain,
    CellStyle.make({ flags: CellStyle.flags.bold }),
    CellStyle.make({ foreground: TerminalColor.indexed(3), flags: CellStyle.flags.reverse }),
    CellStyle.make({ background: TerminalColor.rgb(9, 8, 7), underline: 'curly' }),
  ];
  const texts = ['', ' ', 'a', 'b', 'e\u0301'];
  /** @param {number} columns @returns {ScreenCell[]} */
  function randomRow(columns) {
    /** @type {ScreenCell[]} */
    const cells = [];
    while (cells.length < columns) {
      const style = styles[random.below(styles.length)];
      const choice = random.below(10);
      if (choice === 0 && cells.length + 1 < columns) cells.push(...wide('日', style));
      else if (choice === 1) cells.push(ScreenCell.make('', 0, style)); // an orphan half
      else if (choice === 2) cells.push(ScreenCell.make('本', 2, style)); // maybe cut
      else cells.push(ScreenCell.make(texts[random.below(texts.length)], 1, style));
    }
    return cells.slice(0, columns);
  }
  /** @type {Map<string, ViewSpan[]>} */
  const byKey = new Map();
  for (let round = 0; round < 2000; round++) {
    const columns = 1 + random.below(6);
    const cells = randomRow(columns);
    const row = ScreenViewModel.row(cells);
    let column = 0;
    for (const span of row.spans) {
      assert.equal(span.column, column);
      if (span.className.includes('t-wide')) assert.ok(span.cells === 2 && (span.text === '日' || span.text === '本'));
      else assert.equal([...span.text.normalize('NFC')].length, span.cells);
      column += span.cells;
    }
    assert.equal(column, columns);
    // The same cells made again: the same key.
    assert.equal(ScreenViewModel.row(cells.map((cell) => ScreenCell.make(cell.text, cell.width, cell.style))).key, row.key);
    const seen = byKey.get(row.key);
    if (seen !== undefined) assert.deepEqual(row.spans, seen);
    else byKey.set(row.key, row.spans);
  }
  assert.ok(byKey.size > 1000);
});
