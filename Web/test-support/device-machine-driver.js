// Drives a DeviceConnectionMachine with a fake clock: no socket, no crypto, no timer. It plays the
// shell (attempts end when the test says, ticks come at `nextWake`) and the computer (the messages
// it would send), as Tests/CompanionTests/DeviceMachineDriver.swift drives the Swift twin.

import { DeviceConnectionMachine } from '../js/device-connection-machine.js';
import { ChannelMessage } from '../js/channel-message.js';
import { SessionMessage } from '../js/session-message.js';

/** @typedef {import('../js/device-connection-machine.js').DeviceAction} Action */
/** @typedef {import('../js/device-connection-machine.js').DeviceInput} Input */
/** @typedef {import('../js/device-connection-machine.js').DeviceConnectionSettings} Settings */
/** @typedef {import('../js/device-connection-machine.js').Arrival} Arrival */

export const RELAY = 'relay.test';
export const TOKEN = new Uint8Array(16).fill(7);

/**
 * @param {{registeredNow?: boolean, servesScreenSessions?: boolean}} [fields]
 * @returns {Arrival}
 */
export function arrival(fields = {}) {
  return { relay: RELAY, registeredNow: fields.registeredNow ?? false, servesScreenSessions: fields.servesScreenSessions ?? true };
}

export class DeviceMachineDriver {
  /** @param {(settings: Settings) => void} [configure] */
  constructor(configure) {
    /** @type {Settings} */
    const settings = { attach: { type: 'session', name: 'main' }, cols: 80, rows: 24, random: () => 0.5 };
    configure?.(settings);
    this.machine = new DeviceConnectionMachine(settings);
    this.now = 1000;
    /** @type {Action[]} every action so far, in order */
    this.log = [];
  }

  /** @param {Input} input @returns {Action[]} */
  handle(input) {
    const actions = this.machine.handle(input, this.now);
    this.log.push(...actions);
    return actions;
  }

  /**
   * Ticks at every wake up to `time` (the clock then reads `time`): what they did.
   * @param {number} time
   */
  runUntil(time) {
    /** @type {Action[]} */
    const actions = [];
    for (let i = 0; i < 10000; i++) {
      const wake = this.machine.nextWake;
      if (wake === null || wake > time) break;
      this.now = Math.max(this.now, wake);
      actions.push(...this.handle({ type: 'tick' }));
    }
    this.now = Math.max(this.now, time);
    return actions;
  }

  /** @param {number} seconds */
  advance(seconds) {
    return this.runUntil(this.now + seconds);
  }

  /** Starts, and ends its first attempt with a connection: its id. */
  connect() {
    const id = DeviceMachineDriver.attempts(this.handle({ type: 'start' }))[0];
    this.handle({ type: 'attemptEnded', id, result: { ok: true, arrival: arrival() } });
    return id;
  }

  /**
   * The attempt the actions started (the last one), ended with a connection.
   * @param {Action[]} actions
   */
  arrive(actions) {
    const id = DeviceMachineDriver.attempts(actions).at(-1);
    if (id === undefined) throw new Error('no attempt started');
    return this.handle({ type: 'attemptEnded', id, result: { ok: true, arrival: arrival() } });
  }

  /**
   * Messages from the computer on connection `id`.
   * @param {number} id
   * @param {Uint8Array[]} messages
   */
  computer(id, messages) {
    return this.handle({ type: 'frame', id, messages });
  }

  /**
   * The computer starts (or resumes) the session the device last attached on `id`.
   * @param {number} id
   * @param {{offset?: bigint, window?: number}} [fields]
   */
  started(id, fields = {}) {
    const stream = this.machine.session.stream;
    return this.computer(id, [SessionMessage.encode({
      type: 'started', stream, token: TOKEN, offset: fields.offset ?? 0n, window: fields.window ?? 4 * 1024 * 1024,
    })]);
  }

  /** @param {Action[]} actions @returns {number[]} the attempts the actions started */
  static attempts(actions) {
    return actions.flatMap((action) => (action.type === 'connect' ? [action.id] : []));
  }

  /** @param {Action[]} actions the channel messages sent, parsed */
  static sent(actions) {
    return actions.flatMap((action) => (action.type === 'send' ? [ChannelMessage.parse(action.bytes)] : []));
  }

  /** @param {Action[]} actions */
  static sessionSent(actions) {
    return DeviceMachineDriver.sent(actions).flatMap((message) => (message.type === 'session' ? [message.message] : []));
  }

  /** @param {Action[]} actions @returns {string} the input bytes sent, as text */
  static input(actions) {
    return DeviceMachineDriver.sessionSent(actions).map((message) => (message.type === 'input' ? new TextDecoder().decode(message.data) : '')).join('');
  }

  /** @param {Action[]} actions @returns {number[]} */
  static pings(actions) {
    return DeviceMachineDriver.sent(actions).flatMap((message) =>
      (message.type === 'control' && message.message.type === 'ping' ? [message.message.number] : []));
  }

  /** @param {Action[]} actions */
  static events(actions) {
    return actions.flatMap((action) => (action.type === 'emit' ? [action.event] : []));
  }

  /** @param {Action[]} actions */
  static finish(actions) {
    for (const action of actions) if (action.type === 'finish') return action.termination;
    return null;
  }
}
