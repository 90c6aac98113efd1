import Foundation
import Glibc
import HerdrCrypto
import Plumbing
import RelayClient
import RelayProtocol
import RelayServer
import RelayStorage
import Synchronization
import TLS
import TestSupport
import Testing

/// The origin every test relay is configured with; clients sign for it while connecting to
/// 127.0.0.1 on the relay's port.
let testOrigin = "https://relay.test"

/// A real relay in this process on 127.0.0.1, plain TCP unless given TLS.
final class TestRelay {
    let server: RelayServer
    let port: UInt16
    let usesTLS: Bool

    init(
        port: UInt16 = 0, attestationRequired: Bool = false, databasePath: String? = nil, redisURL: String? = nil,
        tls: TLSContext? = nil, configure: @Sendable (inout RelayConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = RelayConfiguration(origin: testOrigin, attestationRequired: attestationRequired)
        configure(&configuration)
        let frozen = configuration
        server = try RelayServer(options: RelayServer.Options(bindAddress: "127.0.0.1", port: port, tls: tls)) {
            let store: any RelayStore =
                if let redisURL {
                    try RedisRelayStore(address: RedisAddress(url: redisURL))
                } else {
                    try databasePath.map { try SQLiteRelayStore(path: $0) } ?? MemoryRelayStore()
                }
            return RelayCore(configuration: frozen, store: store, clock: SystemRelayClock())
        }
        self.port = server.port
        usesTLS = tls != nil
    }

    deinit { server.shutdown() }

    func shutdown() { server.shutdown() }

    /// `https://relay.test`, reached at 127.0.0.1:port.
    var endpoint: RelayEndpoint {
        // swift-format-ignore: NeverUseForceTry
        try! RelayEndpoint(parsing: testOrigin).connecting(toHost: "127.0.0.1", port: port, tls: usesTLS)
    }

    var http: RelayHTTPClient { RelayHTTPClient(endpoint: endpoint, timeout: 5) }
}

/// 1 byte and 256 KiB, each way, intact.
func checkSplice(_ mac: RelayConnection, _ phone: RelayConnection) throws {
    let small = [UInt8(0x5a)]
    let large = SecureRandom.bytes(RelayLimits.frameSize)
    try mac.send(small)
    #expect(try expectMessage(phone) == small)
    try phone.send(small)
    #expect(try expectMessage(mac) == small)
    try mac.send(large)
    #expect(try expectMessage(phone) == large)
    try phone.send(large)
    #expect(try expectMessage(mac) == large)
}

func randomRoom() -> String { Hex.encode(SecureRandom.bytes(32)) }

func quickOptions() -> RelayConnection.Options {
    var options = RelayConnection.Options()
    options.connectTimeout = 5
    options.admissionTimeout = 5
    return options
}

func connect(
    _ relay: TestRelay, room: String, role: RelayRole, credential: RelayCredential = .none,
    options: RelayConnection.Options = quickOptions()
) throws -> RelayConnection {
    try RelayConnection.connect(to: relay.endpoint, room: room, role: role, credential: credential, options: options)
}

/// A relay serving TLS with a throwaway certificate for `relay.test`, and the endpoint that
/// trusts it (the certificate's files live in `directory`).
func tlsTestRelay(in directory: TemporaryDirectory) throws -> (
    relay: TestRelay, endpoint: RelayEndpoint, certificate: TestCertificate
) {
    let certificate = try TestCertificate(in: directory, name: "relay", commonName: "relay.test")
    let relay = try TestRelay(
        tls: try TLSContext.server(certificateChainFile: certificate.certificate, privateKeyFile: certificate.key))
    return (relay, relay.endpoint.trusting(certificatesFile: certificate.certificate), certificate)
}

/// A Mac parked in a fresh open-mode room at `endpoint`, and a phone joined to it.
func connectPair(to endpoint: RelayEndpoint) throws -> (mac: RelayConnection, phone: RelayConnection) {
    let room = randomRoom()
    let mac = try RelayConnection.connect(
        to: endpoint, room: room, role: .computer, credential: .none, options: quickOptions())
    do {
        return (
            mac,
            try RelayConnection.connect(
                to: endpoint, room: room, role: .device, credential: .none, options: quickOptions())
        )
    } catch {
        mac.close()
        throw error
    }
}

/// The next binary frame, failing the test if something else (or nothing) comes within `timeout`.
func expectMessage(
    _ connection: RelayConnection, timeout: Double = 5, sourceLocation: SourceLocation = #_sourceLocation
)
    throws -> [UInt8]
{
    let event = connection.receive(timeout: timeout)
    guard case .message(let bytes)? = event else {
        throw FixtureError("expected a binary frame within \(timeout) s, got \(String(describing: event))")
    }
    return bytes
}

/// The end event, within `timeout`, skipping frames.
func expectEnd(_ connection: RelayConnection, timeout: Double = 5) throws -> FramePipeEnd {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        switch connection.receive(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
        case .ended(let end)?: return end
        case .message?: continue
        case nil: break
        }
    }
    throw FixtureError("the connection did not end within \(timeout) s")
}

/// A Mac parked and a phone admitted in a fresh pairing room, the phone's token registered with
/// a fresh join key: an established room. The two sockets stay open.
struct EstablishedRoom {
    let room: String
    let joinKey: RelayJoinKey
    let mac: RelayConnection
    let phone: RelayConnection

    init(_ relay: TestRelay) throws {
        room = randomRoom()
        mac = try connect(relay, room: room, role: .computer)
        phone = try connect(relay, room: room, role: .device)
        let token = try #require(phone.registrationToken)
        joinKey = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        try relay.http.register(room: room, registrationToken: token, verifier: joinKey.verifier)
    }

    func close() {
        mac.close()
        phone.close()
        mac.waitUntilEnded(timeout: 3)
        phone.waitUntilEnded(timeout: 3)
    }
}

/// A TCP proxy in front of a relay that can turn into a black hole: it keeps every socket open
/// but stops moving bytes, like a network path that silently died.
final class BlackholeProxy: Sendable {
    let port: UInt16
    private let listenFD: Int32
    private let frozen = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(targetPort: UInt16) throws {
        (listenFD, port) = try LoopbackSocket.listen()
        let thread = Thread { [self] in pump(targetPort: targetPort) }
        thread.start()
    }

    /// Stop moving bytes; keep every socket open.
    func freeze() { frozen.store(true, ordering: .releasing) }

    func shutdown() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
        close(listenFD)
    }

    private func pump(targetPort: UInt16) {
        var pairs: [(Int32, Int32)] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        defer {
            for (a, b) in pairs {
                close(a)
                close(b)
            }
            finished.signal()
        }
        while !stopping.load(ordering: .acquiring) {
            let isFrozen = frozen.load(ordering: .acquiring)
            var fds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)]
            if !isFrozen {
                for (a, b) in pairs {
                    fds.append(pollfd(fd: a, events: Int16(POLLIN), revents: 0))
                    fds.append(pollfd(fd: b, events: Int16(POLLIN), revents: 0))
                }
            }
            guard poll(&fds, nfds_t(fds.count), 50) > 0 else { continue }
            if fds[0].revents != 0 {
                let client = accept(listenFD, nil, nil)
                if client >= 0 {
                    if let upstream = try? Self.connectLoopback(targetPort) {
                        pairs.append((client, upstream))
                    } else {
                        close(client)
                    }
                }
            }
            if isFrozen || frozen.load(ordering: .acquiring) { continue }
            var dead: Set<Int32> = []
            for entry in fds.dropFirst() where entry.revents != 0 {
                guard let pair = pairs.first(where: { $0.0 == entry.fd || $0.1 == entry.fd }) else { continue }
                let other = pair.0 == entry.fd ? pair.1 : pair.0
                let count = read(entry.fd, &buffer, buffer.count)
                if count <= 0 {
                    dead.insert(pair.0)
                    continue
                }
                var offset = 0
                while offset < count {
                    let written = buffer.withUnsafeBytes { write(other, $0.baseAddress! + offset, count - offset) }
                    if written <= 0 { break }
                    offset += written
                }
            }
            for (a, b) in pairs where dead.contains(a) {
                close(a)
                close(b)
            }
            pairs.removeAll { dead.contains($0.0) }
        }
    }

    private static func connectLoopback(_ port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            throw FixtureError("proxy could not reach the relay")
        }
        return fd
    }
}
