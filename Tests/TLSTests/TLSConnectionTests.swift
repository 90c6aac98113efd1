import Foundation
import Glibc
import TLS
import TestSupport
import Testing

@Suite("TLS connections over loopback sockets")
struct TLSConnectionTests {
    @Test("our server and our client: handshake, 1 MB each way, close_notify seen as .closed")
    func loopbackRoundTrip() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let serverContext = try TLSContext.server(
            certificateChainFile: identity.certificate, privateKeyFile: identity.key)
        let clientContext = try TLSContext.client(trustedCertificatesFile: identity.certificate)
        let listener = try LoopbackListener()
        let sockets = try listener.pair()
        defer {
            close(sockets.client)
            close(sockets.server)
        }
        let client = try TLSConnection(
            context: clientContext, fd: sockets.client, role: .client(serverName: "localhost"))
        let server = try TLSConnection(context: serverContext, fd: sockets.server, role: .server)

        let outcomes = try handshakeAll([client, server])
        #expect(outcomes.allSatisfy { $0.error == nil }, "\(outcomes.compactMap(\.error))")
        #expect(client.isEstablished && server.isEstablished)
        #expect(client.negotiatedProtocol == "http/1.1")
        #expect(server.negotiatedProtocol == "http/1.1")
        #expect(client.protocolVersion == "TLSv1.3")

        let size = 1 << 20
        let clientSide = Endpoint(client, sending: randomBytes(size))
        let serverSide = Endpoint(server, sending: randomBytes(size))
        try pump([clientSide, serverSide], "1 MB each way") {
            clientSide.received.count >= size && serverSide.received.count >= size
        }
        #expect(serverSide.received == clientSide.outgoing)
        #expect(clientSide.received == serverSide.outgoing)

        // The client closes; the server sees .closed, answers with its own close_notify, which
        // the client sees as .closed too.
        client.shutdown()
        try pump([serverSide], "the server seeing close_notify") { serverSide.peerClosed }
        server.shutdown()
        try pump([clientSide], "the client seeing close_notify") { clientSide.peerClosed }
    }

    @Test("a peer closing its socket without close_notify reads as .closed")
    func eofWithoutCloseNotify() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let serverContext = try TLSContext.server(
            certificateChainFile: identity.certificate, privateKeyFile: identity.key)
        let clientContext = try TLSContext.client(trustedCertificatesFile: identity.certificate)
        let listener = try LoopbackListener()
        let sockets = try listener.pair()
        defer { close(sockets.server) }
        let server = try TLSConnection(context: serverContext, fd: sockets.server, role: .server)
        do {
            let client = try TLSConnection(
                context: clientContext, fd: sockets.client, role: .client(serverName: "127.0.0.1"))
            let outcomes = try handshakeAll([client, server])
            #expect(outcomes.allSatisfy { $0.error == nil }, "\(outcomes.compactMap(\.error))")
        }
        close(sockets.client)
        let serverSide = Endpoint(server)
        try pump([serverSide], "the server seeing EOF") { serverSide.peerClosed }
    }

    @Test("client refuses a certificate not valid for the name it asked for")
    func wrongHostName() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let (client, server) = try handshakeAgainst(
            identity, trusting: identity.certificate, serverName: "evil.example")
        let error = try #require(client.error)
        #expect(error.kind == .verification)
        #expect(error.message.contains("hostname mismatch"), "\(error)")
        #expect(error.message.contains("evil.example"), "\(error)")
        #expect(server.error != nil)
    }

    @Test("client refuses a certificate its trusted file does not vouch for")
    func untrustedCertificate() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let stranger = try TestCertificate(in: directory, name: "stranger", commonName: "other.example")
        let (client, _) = try handshakeAgainst(identity, trusting: stranger.certificate, serverName: "localhost")
        let error = try #require(client.error)
        #expect(error.kind == .verification)
        #expect(
            error.message.contains("self-signed certificate") || error.message.contains("self signed certificate"),
            "\(error)")
        #expect(error.message.contains("localhost"), "\(error)")
    }

    @Test("a plaintext HTTP request to the TLS server fails the handshake, nothing worse")
    func plaintextClient() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let serverContext = try TLSContext.server(
            certificateChainFile: identity.certificate, privateKeyFile: identity.key)
        let listener = try LoopbackListener()
        let sockets = try listener.pair()
        defer {
            close(sockets.client)
            close(sockets.server)
        }
        let request = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        #expect(Glibc.write(sockets.client, request, request.count) == request.count)
        let server = try TLSConnection(context: serverContext, fd: sockets.server, role: .server)
        let outcome = try handshakeAll([server])[0]
        let error = try #require(outcome.error)
        #expect(error.kind == .handshake)
        #expect(error.message.hasPrefix("TLS handshake with client failed"), "\(error)")
        // The failure sticks; nothing is sent or read afterwards.
        var buffer = [UInt8](repeating: 0, count: 64)
        guard case .failed = buffer.withUnsafeMutableBytes({ server.read(into: $0) }) else {
            Issue.record("read after a failed handshake did not fail")
            return
        }
        server.shutdown()
    }

    @Test("connections refuse a context of the other role")
    func roleMismatch() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let serverContext = try TLSContext.server(
            certificateChainFile: identity.certificate, privateKeyFile: identity.key)
        let clientContext = try TLSContext.client(trustedCertificatesFile: nil)
        #expect(throws: TLSError.self) {
            try TLSConnection(context: serverContext, fd: 0, role: .client(serverName: "x"))
        }
        #expect(throws: TLSError.self) { try TLSConnection(context: clientContext, fd: 0, role: .server) }
    }

    /// Our server presenting `identity`; our client trusting `trusted` and expecting `serverName`.
    private func handshakeAgainst(
        _ identity: TestCertificate, trusting trusted: String, serverName: String
    ) throws -> (client: HandshakeOutcome, server: HandshakeOutcome) {
        let serverContext = try TLSContext.server(
            certificateChainFile: identity.certificate, privateKeyFile: identity.key)
        let clientContext = try TLSContext.client(trustedCertificatesFile: trusted)
        let listener = try LoopbackListener()
        let sockets = try listener.pair()
        defer {
            close(sockets.client)
            close(sockets.server)
        }
        let client = try TLSConnection(
            context: clientContext, fd: sockets.client, role: .client(serverName: serverName))
        let server = try TLSConnection(context: serverContext, fd: sockets.server, role: .server)
        let outcomes = try handshakeAll([client, server])
        return (outcomes[0], outcomes[1])
    }
}
