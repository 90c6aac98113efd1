#!/usr/bin/env python3
"""Traffic for the link emulator's tests, run inside the test's network namespaces.

  udp-echo PORT                  echo datagrams on [::]:PORT (IPv4 too); prints "listening"
  tcp-echo PORT                  echo lines to every connection on [::]:PORT; prints "listening"
  tcp-sink PORT                  count each connection's bytes until EOF, answer "got N", close
  udp-rtt HOST PORT COUNT        COUNT sequential round trips (2 s each); "rtt-ms X" per answer, then "received N"
  tcp-connect-ms HOST PORT       "connect-ms X" (SYN to SYN-ACK), or "connect-failed REASON" within 3 s
  tcp-send HOST PORT BYTES       sends BYTES to a sink; "sent N seconds S got N" (S from before connect to the answer)
  tcp-client HOST PORT           connects ("connected LOCAL-ADDRESS"), then on stdin "send TEXT" sends a line;
                                 each line that comes back is printed "recv TEXT rtt-ms X"; "exit" ends

Servers end when their standard input ends, so one never outlives a test process that died.
"""
import os
import socket
import sys
import threading
import time


def server_socket(kind, port):
    sock = socket.socket(socket.AF_INET6, kind)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("::", port))
    return sock


def say(*words):
    print(*words, flush=True)


def exit_at_end_of_input():
    def watch():
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def udp_echo(port):
    sock = server_socket(socket.SOCK_DGRAM, port)
    say("listening")
    while True:
        data, peer = sock.recvfrom(65536)
        sock.sendto(data, peer)


def serve_tcp(port, handle):
    sock = server_socket(socket.SOCK_STREAM, port)
    sock.listen(16)
    say("listening")
    while True:
        connection, _ = sock.accept()
        threading.Thread(target=handle, args=(connection,), daemon=True).start()


def echo_lines(connection):
    with connection:
        while True:
            data = connection.recv(65536)
            if not data:
                return
            connection.sendall(data)


def sink(connection):
    with connection:
        total = 0
        while True:
            data = connection.recv(1 << 16)
            if not data:
                break
            total += len(data)
        connection.sendall(b"got %d\n" % total)


def udp_rtt(host, port, count):
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.settimeout(2)
    received = 0
    for index in range(count):
        payload = b"probe %d" % index
        start = time.monotonic()
        sock.sendto(payload, address)
        try:
            while True:
                data, _ = sock.recvfrom(65536)
                if data == payload:
                    break
            received += 1
            say("rtt-ms %.3f" % ((time.monotonic() - start) * 1000))
        except socket.timeout:
            pass
    say("received %d" % received)


def tcp_connect_ms(host, port):
    start = time.monotonic()
    try:
        sock = socket.create_connection((host, port), timeout=3)
    except OSError as error:
        say("connect-failed %s" % error)
        return
    say("connect-ms %.3f" % ((time.monotonic() - start) * 1000))
    sock.close()


def tcp_send(host, port, count):
    start = time.monotonic()
    sock = socket.create_connection((host, port), timeout=120)
    block = b"x" * 65536
    sent = 0
    while sent < count:
        chunk = block[: min(len(block), count - sent)]
        sock.sendall(chunk)
        sent += len(chunk)
    sock.shutdown(socket.SHUT_WR)
    answer = sock.makefile().readline().strip()
    say("sent %d seconds %.6f %s" % (sent, time.monotonic() - start, answer))


def tcp_client(host, port):
    sock = socket.create_connection((host, port), timeout=10)
    sock.settimeout(None)
    say("connected %s" % sock.getsockname()[0])
    sent_at = {}

    def reader():
        for line in sock.makefile():
            text = line.rstrip("\n")
            started = sent_at.pop(text, None)
            elapsed = (time.monotonic() - started) * 1000 if started is not None else -1
            say("recv %s rtt-ms %.3f" % (text, elapsed))
        say("closed")

    threading.Thread(target=reader, daemon=True).start()
    for command in sys.stdin:
        words = command.rstrip("\n").split(" ", 1)
        if words[0] == "exit":
            return
        if words[0] == "send" and len(words) == 2:
            sent_at[words[1]] = time.monotonic()
            sock.sendall((words[1] + "\n").encode())


def main():
    command, arguments = sys.argv[1], sys.argv[2:]
    if command in ("udp-echo", "tcp-echo", "tcp-sink"):
        exit_at_end_of_input()
    if command == "udp-echo":
        udp_echo(int(arguments[0]))
    elif command == "tcp-echo":
        serve_tcp(int(arguments[0]), echo_lines)
    elif command == "tcp-sink":
        serve_tcp(int(arguments[0]), sink)
    elif command == "udp-rtt":
        udp_rtt(arguments[0], int(arguments[1]), int(arguments[2]))
    elif command == "tcp-connect-ms":
        tcp_connect_ms(arguments[0], int(arguments[1]))
    elif command == "tcp-send":
        tcp_send(arguments[0], int(arguments[1]), int(arguments[2]))
    elif command == "tcp-client":
        tcp_client(arguments[0], int(arguments[1]))
    else:
        sys.exit("unknown command %s" % command)


if __name__ == "__main__":
    main()
