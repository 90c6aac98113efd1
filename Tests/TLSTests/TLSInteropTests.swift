import Foundation
import Glibc
import TLS
import TestSupport
import Testing

@Suite("TLS against the openssl command")
struct TLSInteropTests {
    @Test("openssl s_client, verifying our certificate, talks to our server")
    func sClientAgainstOurServer() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let context = try TLSContext.server(certificateChainFile: identity.certificate, privateKeyFile: identity.key)
        let listener = try LoopbackListener()
        let child = try PipedChild(
            try ProcessRunner.which("openssl"),
            [
                "s_client", "-connect", "127.0.0.1:\(listener.port)", "-CAfile", identity.certificate,
                "-verify_return_error", "-verify_hostname", "localhost", "-servername", "localhost", "-quiet",
            ], errorFile: directory.file("s_client.err"))
        defer { child.finish(timeout: 0) }
        let fd = try listener.accept()
        defer { close(fd) }
        let server = try TLSConnection(context: context, fd: fd, role: .server)
        let outcome = try handshakeAll([server])[0]
        #expect(outcome.error == nil, "\(outcome.error.map(String.init(describing:)) ?? ""); \(child.errors)")

        try child.send("hello from s_client\n")
        let endpoint = Endpoint(server)
        try pump([endpoint], "the line from s_client") { endpoint.received.contains(UInt8(ascii: "\n")) }
        #expect(String(decoding: endpoint.received, as: UTF8.self) == "hello from s_client\n")

        let reply = Endpoint(server, sending: Array("echo: hello from s_client\n".utf8))
        try pump([reply], "the reply to s_client") { reply.sent == reply.outgoing.count }
        #expect(try child.output(containing: "echo: hello from s_client\n").hasSuffix("echo: hello from s_client\n"))

        server.shutdown()
        #expect(child.finish() == 0, "\(child.errors)")
    }

    @Test("our client, verifying its certificate, talks to openssl s_server")
    func ourClientAgainstSServer() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let child = try PipedChild(
            try ProcessRunner.which("openssl"),
            [
                "s_server", "-accept", "127.0.0.1:0", "-cert", identity.certificate, "-key", identity.key,
                "-naccept", "1",
            ], errorFile: directory.file("s_server.err"))
        defer { child.finish(timeout: 0) }
        // "ACCEPT 127.0.0.1:41453": the port the kernel picked.
        let acceptLine = try child.line(startingWith: "ACCEPT ")
        let port = try #require(UInt16(acceptLine.split(separator: ":").last ?? ""), "\(acceptLine)")

        let context = try TLSContext.client(trustedCertificatesFile: identity.certificate)
        let fd = try LoopbackListener.connect(to: port)
        defer { close(fd) }
        let client = try TLSConnection(context: context, fd: fd, role: .client(serverName: "localhost"))
        let outcome = try handshakeAll([client])[0]
        #expect(outcome.error == nil, "\(outcome.error.map(String.init(describing:)) ?? ""); \(child.errors)")

        let hello = Endpoint(client, sending: Array("hello from our client\n".utf8))
        try pump([hello], "the line to s_server") { hello.sent == hello.outgoing.count }
        _ = try child.output(containing: "hello from our client\n")

        try child.send("reply from s_server\n")
        let endpoint = Endpoint(client)
        try pump([endpoint], "the line from s_server") { endpoint.received.contains(UInt8(ascii: "\n")) }
        #expect(String(decoding: endpoint.received, as: UTF8.self) == "reply from s_server\n")
        client.shutdown()
    }
}
