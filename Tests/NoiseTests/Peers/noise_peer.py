#!/usr/bin/env python3
"""An independent Noise peer for the interop tests: the PyPI package `noiseprotocol`.

Speaks over stdin/stdout in frames of a 4-byte big-endian length then the bytes, one Noise
message per frame, exactly like the companion channel over a message pipe:

1. The handshake for --protocol in --role, with --prologue, --static (this side's private key)
   and --remote-static (the peer's public key) as the pattern needs. With --handshake-payloads,
   message i carries b"hs-<i>-from-<role>" and the peer's must be b"hs-<i>-from-<peer role>";
   otherwise handshake payloads are empty, and must be.
2. Transport with the companion chunking rule: each Noise message's plaintext is a flag byte
   (1 = more, 0 = last) followed by at most 65518 bytes. This side first sends
   b"hash:" + its handshake hash; then answers every message m with b"echo:" + m, until m is
   b"bye", which it answers with b"bye-ack" and exits 0.

Any failure (a refused message, a wrong payload, a bad flag) prints the reason on stderr and
exits 1.
"""
import argparse
import struct
import sys

from noise.connection import Keypair, NoiseConnection

MAX_CHUNK = 65535 - 16 - 1


def read_exact(stream, count):
    data = b""
    while len(data) < count:
        chunk = stream.read(count - len(data))
        if not chunk:
            raise EOFError("peer closed the pipe")
        data += chunk
    return data


def read_frame(stream):
    (length,) = struct.unpack(">I", read_exact(stream, 4))
    return read_exact(stream, length)


def write_frame(stream, frame):
    stream.write(struct.pack(">I", len(frame)) + bytes(frame))
    stream.flush()


def send_message(proto, stream, message):
    chunks = [message[i:i + MAX_CHUNK] for i in range(0, len(message), MAX_CHUNK)] or [b""]
    for index, chunk in enumerate(chunks):
        flag = b"\x00" if index == len(chunks) - 1 else b"\x01"
        write_frame(stream, proto.encrypt(flag + chunk))


def receive_message(proto, stream):
    message = b""
    while True:
        plaintext = proto.decrypt(read_frame(stream))
        if len(plaintext) < 1 or plaintext[0] not in (0, 1):
            raise ValueError("bad chunk flag")
        message += plaintext[1:]
        if plaintext[0] == 0:
            return message


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", required=True)
    parser.add_argument("--role", choices=["initiator", "responder"], required=True)
    parser.add_argument("--prologue", default="")
    parser.add_argument("--static")
    parser.add_argument("--remote-static")
    parser.add_argument("--handshake-payloads", action="store_true")
    args = parser.parse_args()

    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    proto = NoiseConnection.from_name(args.protocol.encode())
    if args.role == "initiator":
        proto.set_as_initiator()
    else:
        proto.set_as_responder()
    proto.set_prologue(bytes.fromhex(args.prologue))
    if args.static:
        proto.set_keypair_from_private_bytes(Keypair.STATIC, bytes.fromhex(args.static))
    if args.remote_static:
        proto.set_keypair_from_public_bytes(Keypair.REMOTE_STATIC, bytes.fromhex(args.remote_static))
    proto.start_handshake()

    other = "responder" if args.role == "initiator" else "initiator"
    index = 0
    writing = args.role == "initiator"
    while not proto.handshake_finished:
        if writing:
            payload = f"hs-{index}-from-{args.role}".encode() if args.handshake_payloads else b""
            write_frame(stdout, proto.write_message(payload))
        else:
            payload = bytes(proto.read_message(read_frame(stdin)))
            expected = f"hs-{index}-from-{other}".encode() if args.handshake_payloads else b""
            if payload != expected:
                raise ValueError(f"handshake payload {index}: {payload!r}, expected {expected!r}")
        writing = not writing
        index += 1

    send_message(proto, stdout, b"hash:" + proto.get_handshake_hash())
    while True:
        message = receive_message(proto, stdin)
        if message == b"bye":
            send_message(proto, stdout, b"bye-ack")
            return 0
        send_message(proto, stdout, b"echo:" + message)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # noqa: BLE001 - any failure ends the peer, loudly
        print(f"noise_peer: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
