// The board on the page: every paired computer, its state in words, and its agents in the order
// a person wants them (blocked first, then done, working, idle: AgentBoard.sorted). Choosing an
// agent opens its pane; each computer can be unpaired. The DOM side of `watch`'s board.

import { AgentBoard } from './agent-board.js';

/** @typedef {import('./herdr-agent.js').HerdrAgent} HerdrAgent */

/**
 * One computer as the board shows it.
 * @typedef {object} BoardComputer
 * @property {string} id
 * @property {string} name
 * @property {string} state its connection in words (`connecting`, `unreachable since 14:02`…)
 * @property {AgentBoard | null} board its agents, once read
 */

/**
 * @typedef {object} BoardViewOptions
 * @property {(computer: string, agent: HerdrAgent) => void} onOpen
 * @property {(computer: string) => void} onOpenTerminal the computer's herdr session itself, as `connect` attaches it
 * @property {(computer: string) => void} onUnpair
 */

/** A status in words, for the list and a screen reader. */
const STATUS_WORDS = Object.freeze({
  blocked: 'needs you', done: 'done', working: 'working', idle: 'idle', unknown: 'unknown',
});

export class BoardView {
  #list;
  #options;

  /**
   * @param {HTMLElement} container
   * @param {BoardViewOptions} options
   */
  constructor(container, options) {
    this.#options = options;
    this.#list = container;
  }

  /** @param {BoardComputer[]} computers */
  render(computers) {
    const document = this.#list.ownerDocument;
    if (computers.length === 0) {
      const empty = document.createElement('p');
      empty.className = 'empty';
      empty.textContent = 'No computer is paired yet. On the computer, run herdr-host pair --web and scan its code with this phone\'s camera.';
      this.#list.replaceChildren(empty);
      return;
    }
    this.#list.replaceChildren(...computers.map((computer) => this.#section(computer)));
  }

  /** @param {BoardComputer} computer */
  #section(computer) {
    const document = this.#list.ownerDocument;
    const section = document.createElement('section');
    section.className = 'computer';
    section.setAttribute('aria-label', computer.name);
    const header = document.createElement('header');
    const name = document.createElement('h2');
    name.textContent = computer.name;
    const state = document.createElement('p');
    state.className = 'state';
    state.textContent = computer.state;
    const unpair = document.createElement('button');
    unpair.type = 'button';
    unpair.className = 'unpair';
    unpair.textContent = 'Unpair';
    unpair.setAttribute('aria-label', `Unpair ${computer.name}`);
    unpair.addEventListener('click', () => this.#options.onUnpair(computer.id));
    const terminal = document.createElement('button');
    terminal.type = 'button';
    terminal.className = 'open-terminal';
    terminal.textContent = 'Terminal';
    terminal.setAttribute('aria-label', `Open ${computer.name}'s terminal`);
    terminal.addEventListener('click', () => this.#options.onOpenTerminal(computer.id));
    header.append(name, state, terminal, unpair);
    section.append(header);
    const board = computer.board;
    if (!board) return section;
    if (board.herdr.state !== 'ready') {
      const note = document.createElement('p');
      note.className = 'note';
      note.textContent = board.herdr.state === 'not-installed' ? 'No herdr on this computer.' : `herdr is ${board.herdr.state}${board.herdr.detail ? `: ${board.herdr.detail}` : ''}.`;
      section.append(note);
    }
    const agents = AgentBoard.sorted(board);
    const list = document.createElement('ul');
    list.className = 'agents';
    for (const agent of agents) {
      const item = document.createElement('li');
      const open = document.createElement('button');
      open.type = 'button';
      open.className = `agent status-${agent.status}`;
      const label = agent.name ?? agent.kind ?? agent.key.pane;
      const what = document.createElement('span');
      what.className = 'name';
      what.textContent = label;
      const status = document.createElement('span');
      status.className = 'status';
      status.textContent = STATUS_WORDS[agent.status];
      const title = document.createElement('span');
      title.className = 'title';
      title.textContent = agent.title ?? `${agent.key.session}/${agent.key.pane}`;
      open.append(what, status, title);
      open.setAttribute('aria-label', `${label}, ${STATUS_WORDS[agent.status]}: open its pane`);
      open.addEventListener('click', () => this.#options.onOpen(computer.id, agent));
      item.append(open);
      list.append(item);
    }
    if (agents.length === 0 && board.herdr.state === 'ready') {
      const none = document.createElement('p');
      none.className = 'note';
      none.textContent = 'No agents.';
      section.append(none);
    }
    if (board.omitted > 0) {
      const more = document.createElement('p');
      more.className = 'note';
      more.textContent = `${board.omitted} more not listed.`;
      section.append(more);
    }
    section.append(list);
    return section;
  }
}
