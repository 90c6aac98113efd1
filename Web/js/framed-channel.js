// The end-to-end channel over one frame pipe (an admitted relay connection): frames out go
// straight to the pipe, frames in come from the owner. Any failure, of the channel or of a send,
// is fatal: the owner drops the pipe and starts over on the next one with a fresh handshake. The
// twin of FramedChannel and FramedChannelError.

import { SecureChannel, SecureChannelError, SecureChannelLimits } from './secure-channel.js';

/** @typedef {import('./noise.js').HandshakeState} HandshakeState */
/** @typedef {import('./secure-channel.js').Established} Established */
/** @typedef {import('./secure-channel.js').SecureChannelAction} SecureChannelAction */

/**
 * Where frames go: a relay socket's binary messages. `send` throws when the pipe cannot take one.
 * @typedef {{send(frame: Uint8Array): void}} FramePipe
 */

/** @typedef {{type: 'established', established: Established} | {type: 'message', message: Uint8Array}} FramedChannelOutput */

/** Why a framed channel ended: its channel failed (`channel`), or a send did (`send`). */
export class FramedChannelError extends Error {
  /**
   * @param {'channel' | 'send'} kind
   * @param {unknown} cause
   */
  constructor(kind, cause) {
    const words = cause instanceof Error ? cause.message : String(cause);
    super(kind === 'channel' ? `the end-to-end channel failed (${words})` : `sending failed (${words})`, { cause });
    this.name = 'FramedChannelError';
    /** @readonly */
    this.kind = kind;
  }
}

export class FramedChannel {
  #channel;

  /**
   * @param {FramePipe} pipe
   * @param {HandshakeState} handshake
   */
  constructor(pipe, handshake) {
    /** @readonly */
    this.pipe = pipe;
    this.#channel = new SecureChannel(handshake);
  }

  get isEstablished() {
    return this.#channel.isEstablished;
  }

  /** @returns {Established | null} */
  get established() {
    return this.#channel.established;
  }

  /** Frames the device passed over while waiting for the computer's handshake message. */
  get staleFrames() {
    return this.#channel.staleFrames;
  }

  /**
   * Starts the handshake (the initiator's first message goes out).
   * @returns {Promise<FramedChannelOutput[]>}
   */
  async start() {
    return this.#carryOut(await this.#channelCall(() => this.#channel.start()));
  }

  /**
   * One frame from the peer, during the handshake or after.
   * @param {Uint8Array} frame
   * @returns {Promise<FramedChannelOutput[]>}
   */
  async receive(frame) {
    if (this.#channel.isEstablished) {
      const message = this.receiveTransport(frame);
      return message === null ? [] : [{ type: 'message', message }];
    }
    return this.#carryOut(await this.#channelCall(() => this.#channel.receive(frame)));
  }

  /**
   * One frame of the established channel (every keystroke and echo): the message it completes,
   * or null while a chunked one is still arriving.
   * @param {Uint8Array} frame
   * @returns {Uint8Array | null}
   */
  receiveTransport(frame) {
    try {
      return this.#channel.receiveTransport(frame);
    } catch (error) {
      throw new FramedChannelError('channel', error);
    }
  }

  /**
   * Sends one message, chunked into frames as needed.
   * @param {Uint8Array} message
   */
  send(message) {
    let frames;
    try {
      frames = message.length <= SecureChannelLimits.maximumChunkLength
        ? [this.#channel.sendFrame(message)] : this.#channel.send(message);
    } catch (error) {
      throw new FramedChannelError('channel', error);
    }
    for (const frame of frames) {
      try {
        this.pipe.send(frame);
      } catch (error) {
        throw new FramedChannelError('send', error);
      }
    }
  }

  /**
   * @param {() => Promise<SecureChannelAction[]>} call
   * @returns {Promise<SecureChannelAction[]>}
   */
  async #channelCall(call) {
    try {
      return await call();
    } catch (error) {
      throw new FramedChannelError('channel', error instanceof SecureChannelError ? error : new SecureChannelError('noise', String(error)));
    }
  }

  /**
   * @param {SecureChannelAction[]} actions
   * @returns {FramedChannelOutput[]}
   */
  #carryOut(actions) {
    /** @type {FramedChannelOutput[]} */
    const outputs = [];
    for (const action of actions) {
      switch (action.type) {
        case 'send':
          try {
            this.pipe.send(action.frame);
          } catch (error) {
            throw new FramedChannelError('send', error);
          }
          break;
        case 'established': outputs.push({ type: 'established', established: action.established }); break;
        case 'deliver': outputs.push({ type: 'message', message: action.message }); break;
      }
    }
    return outputs;
  }
}
