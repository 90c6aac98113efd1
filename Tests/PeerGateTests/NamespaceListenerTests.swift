import Foundation
import PeerGate
import PeerGateListener
import TestSupport
import Testing

/// The client inside the namespace: connect, say who we are, send a payload, report the first read.
private let namespaceClient = """
    import socket, sys
    local = "-"
    try:
        s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
        local = s.getsockname()[0]
        s.sendall(sys.argv[3].encode())
        data = s.recv(4096)
        outcome = "eof" if data == b"" else "data:" + data.decode(errors="replace")
    except (ConnectionResetError, BrokenPipeError):
        outcome = "reset"
    except socket.timeout:
        outcome = "timeout"
    print(local)
    print(outcome)
    """

/// Runs the client in `namespace` against `host`:`port`; returns (its local address, what its first read saw).
private func knock(
    from namespace: TestNetworkNamespace, host: String, port: UInt16, payload: String
) throws -> (local: String, outcome: String) {
    let python = try ProcessRunner.which("python3")
    let result = try namespace.run(python, ["-c", namespaceClient, host, String(port), payload])
    #expect(result.status == 0, "client failed: \(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    guard lines.count == 2 else { throw FixtureError("unexpected client output: \(result.stdout) \(result.stderr)") }
    return (lines[0], lines[1])
}

@Suite("Gated listener against a tailnet peer in a network namespace", .serialized)
struct NamespaceListenerTests {
    @Test("homeOnly refuses a 100.64/10 peer before reading a byte; /status tells it")
    func refusesTailnetPeer() throws {
        let namespace = try TestNetworkNamespace()
        defer {
            namespace.remove()
            #expect(!namespace.exists, "the namespace and veth are gone")
        }
        let recorder = ListenerRecorder()
        let payload = "GET /status HTTP/1.1\r\nHost: sneaky\r\n\r\n"
        // Dual stack when IPv6 is there: the IPv4 peer then arrives as ::ffff:100.x.y.2 and is unwrapped.
        let bindAddress = ListenerTests.ipv6Loopback ? "::" : "0.0.0.0"
        let listener = try makeListener(
            bindAddress, rules: PeerGateRules(policy: .homeOnly),
            hook: recorder.peekBeforeClose(expecting: payload.utf8.count), onAdmitted: ListenerRecorder.serveStatus)
        defer { listener.close() }

        let (local, outcome) = try knock(
            from: namespace, host: namespace.rootAddress, port: listener.port, payload: payload)
        #expect(local == namespace.innerAddress)
        #expect(outcome == "reset", "the client sees the abortive close (SO_LINGER 0), and no answer: \(outcome)")
        #expect(recorder.unreadAtRefusal.withLock { $0 } == [Array(payload.utf8)], "the request was never read")

        let status = listener.status
        #expect(status.refusedCount == 1)
        #expect(status.admittedCount == 0)
        #expect(status.currentLink == nil)
        #expect(status.lastRefusedPeer?.peer == namespace.innerAddress)
        #expect(status.lastRefusedPeer?.kind == .tailnet)
        #expect(status.lastRefusedPeer?.reason == .outsidePolicy)
        #expect(
            status.lastRefusedPeer?.message
                == "\(namespace.innerAddress) is a tailnet address (100.64.0.0/10); only this machine and the home network may connect here"
        )

        // The same listener answers this machine, and its document tells of the refusal.
        let response = try httpExchange(port: listener.port, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(response.statusLine == "HTTP/1.1 200 OK")
        #expect(response.headers["content-length"] == String(response.body.count))
        let document = try PeerGateStatus.decode(response.body)
        #expect(document.refusedCount == 1)
        #expect(document.admittedCount == 1)
        #expect(document.currentLink?.peer == "127.0.0.1")
        #expect(document.currentLink?.link == .local)
        #expect(document.lastRefusedPeer?.peer == namespace.innerAddress)
        #expect(document.lastRefusedPeer?.kind == .tailnet)
        #expect(document.lastRefusedPeer?.reason == .outsidePolicy)

        // A second knock raises the count and stays refused.
        let again = try knock(from: namespace, host: namespace.rootAddress, port: listener.port, payload: payload)
        #expect(again.outcome == "reset")
        #expect(listener.status.refusedCount == 2)
        #expect(listener.status.currentLink?.peer == "127.0.0.1", "a refusal never replaces the current link")
    }

    @Test("the interface of the local address: admitted with it recorded, or refused by its name")
    func interfaceOfTheVeth() throws {
        let namespace = try TestNetworkNamespace()
        defer {
            namespace.remove()
            #expect(!namespace.exists, "the namespace and veth are gone")
        }
        let tailnet = try PeerPolicy.allowList(parsing: ["100.64.0.0/10"])

        let recorder = ListenerRecorder()
        let admitting = try makeListener(
            "0.0.0.0", rules: PeerGateRules(policy: tailnet, refusedInterfaces: ["wwan*"]),
            onAdmitted: { connection in
                // Echo what the peer sent: the admitted peer's bytes reach the server.
                Thread {
                    var buffer = [UInt8](repeating: 0, count: 64)
                    let count = read(connection.fd, &buffer, buffer.count)
                    if count > 0 { _ = write(connection.fd, buffer, count) }
                    connection.close()
                }.start()
                recorder.admitted.withLock { $0.append(connection) }
            })
        defer { admitting.close() }
        let admitted = try knock(from: namespace, host: namespace.rootAddress, port: admitting.port, payload: "ping")
        #expect(admitted.outcome == "data:ping")
        #expect(admitting.status.currentLink?.peer == namespace.innerAddress)
        #expect(admitting.status.currentLink?.link == .allowList)
        #expect(admitting.status.currentLink?.interface == namespace.rootInterface)

        let refusing = try makeListener(
            "0.0.0.0", rules: PeerGateRules(policy: tailnet, refusedInterfaces: [namespace.rootInterface]),
            hook: recorder.peekBeforeClose(expecting: 4), onAdmitted: recorder.keep)
        defer { refusing.close() }
        let refused = try knock(from: namespace, host: namespace.rootAddress, port: refusing.port, payload: "ping")
        #expect(refused.local == namespace.innerAddress)
        #expect(refused.outcome == "reset")
        #expect(recorder.unreadAtRefusal.withLock { $0 } == [Array("ping".utf8)])
        #expect(refusing.status.refusedCount == 1)
        #expect(refusing.status.lastRefusedPeer?.reason == .refusedInterface)
        #expect(refusing.status.lastRefusedPeer?.interface == namespace.rootInterface)
        #expect(refusing.status.lastRefusedPeer?.kind == .tailnet)
    }
}
