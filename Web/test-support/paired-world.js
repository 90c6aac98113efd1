// A device and a computer already paired through the in-memory relay, for the connection tests:
// the computer parked (`herdr-host run`), the room registered with the join key's verifier, the
// device's pairing as it keeps it, and a DeviceConnection made with the callbacks recorded.

import { FakeRelay } from './fake-relay.js';
import { FakeClock } from './fake-clock.js';
import { SimulatedComputer } from './simulated-computer.js';
import { DeviceConnection } from '../js/device-connection.js';
import { RelayEndpoint } from '../js/relay-endpoint.js';
import { RelayJoinKey, RoomName } from '../js/relay-join.js';
import { generateKeyPair } from '../js/x25519.js';
import { toBase64Url } from '../js/bytes.js';

/** @typedef {import('../js/device-connection-machine.js').DeviceEvent} DeviceEvent */
/** @typedef {import('../js/device-connection-machine.js').Termination} Termination */
/** @typedef {import('../js/device-connection-machine.js').DeviceConnectionSettings} DeviceConnectionSettings */
/** @typedef {import('../js/device-session.js').ScreenFrame} ScreenFrame */
/** @typedef {import('../js/scrollback-lines.js').ScrollbackLines} ScrollbackLines */

/**
 * @param {{computer?: Partial<ConstructorParameters<typeof SimulatedComputer>[0]>, registered?: boolean}} [options]
 */
export async function pairedWorld(options = {}) {
  const clock = new FakeClock();
  const relay = new FakeRelay();
  /** @type {number[]} when each socket was opened, on the fake clock */
  const opened = [];
  const open = relay.openSocket;
  relay.openSocket = (url) => {
    opened.push(clock.now());
    return open(url);
  };
  const computerKey = await generateKeyPair();
  const deviceKey = await generateKeyPair();
  const pid = toBase64Url(crypto.getRandomValues(new Uint8Array(16)).map((byte, i) => (i === 0 ? byte & 0x7f : byte)));
  const room = RoomName.derive(computerKey.publicKey, pid);
  const roomSecret = crypto.getRandomValues(new Uint8Array(32));
  const joinKey = await RelayJoinKey.fromRoomSecret(roomSecret);
  const registered = options.registered ?? true;
  if (registered) relay.room(room).verifier = joinKey.verifier;
  const computer = new SimulatedComputer({
    relay, clock, staticKey: computerKey, pid, room, mode: 'run', deviceKey: deviceKey.publicKey, roomSecret,
    home: ['[fd00::7]:4610'], ...options.computer,
  });
  const pairing = { relay: RelayEndpoint.parse(relay.origin), room, computerKey: computerKey.publicKey, pairingID: pid, roomSecret, registered };
  return { clock, relay, computer, computerKey, deviceKey, pairing, joinKey, room, opened };
}

/**
 * A DeviceConnection in `world`, its events, output, screens and scrollback answers recorded.
 * @param {Awaited<ReturnType<typeof pairedWorld>>} world
 * @param {Partial<DeviceConnectionSettings>} [settings]
 */
export function deviceIn(world, settings = {}) {
  /** @type {(DeviceEvent | {type: 'finished', termination: Termination})[]} */
  const events = [];
  /** @type {Uint8Array[]} */
  const output = [];
  /** @type {ScreenFrame[]} */
  const screens = [];
  /** @type {ScrollbackLines[]} */
  const scrollbacks = [];
  const device = new DeviceConnection({
    settings: { attach: { type: 'session', name: null }, cols: 80, rows: 24, random: () => 0.5, ...settings },
    pairing: world.pairing, deviceName: 'phone', staticKey: world.deviceKey, openSocket: world.relay.openSocket, http: world.relay.http,
    clock: world.clock,
    onEvent: (event) => events.push(event),
    onOutput: (bytes) => {
      output.push(bytes);
      return true;
    },
    onScreen: (frame) => {
      screens.push(frame);
      return true;
    },
    onScrollback: (scrollback) => scrollbacks.push(scrollback),
  });
  return { device, events, output, screens, scrollbacks, text: () => new TextDecoder().decode(Uint8Array.from(output.flatMap((bytes) => Array.from(bytes)))) };
}
