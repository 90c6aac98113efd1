import EndToEndChannel
import Glibc
import HerdrCrypto
import HomeRoad
import Noise
import Plumbing
import Testing

/// `FramedChannel` over a real home-road connection pair (a socket pair): the channel keeps the
/// OpenSSL contexts its handshake made, whichever way messages go.
@Suite struct FramedChannelTests {
    /// Both ends established over `HomeConnection`s on a socket pair.
    struct Ends {
        var device: FramedChannel
        var computer: FramedChannel
        let deviceConnection: HomeConnection
        let computerConnection: HomeConnection

        func close() {
            deviceConnection.close()
            computerConnection.close()
        }
    }

    static func established() throws -> Ends {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let deviceConnection = try HomeConnection(socket: fds[0])
        let computerConnection = try HomeConnection(socket: fds[1])
        let deviceKey = KeyPair.generate()
        let computerKey = KeyPair.generate()
        let profile = CompanionProfile.herdrRemote
        var ends = Ends(
            device: FramedChannel(
                connection: deviceConnection,
                handshake: try profile.initiatorHandshake(
                    pid: "t", localStatic: deviceKey, remoteStatic: computerKey.publicKey)),
            computer: FramedChannel(
                connection: computerConnection,
                handshake: try profile.responderHandshake(pid: "t", localStatic: computerKey)),
            deviceConnection: deviceConnection, computerConnection: computerConnection)
        _ = try ends.device.start()
        _ = try ends.computer.receive(try next(computerConnection))  // -> e, es
        _ = try ends.device.receive(try next(deviceConnection))  // <- e, ee
        _ = try ends.computer.receive(try next(computerConnection))  // -> s, se
        #expect(ends.device.isEstablished && ends.computer.isEstablished)
        return ends
    }

    static func next(_ connection: HomeConnection) throws -> [UInt8] {
        guard case .message(let frame) = connection.receive(timeout: 10) else {
            throw ConnectionError(.connectionLost, "no frame within 10 s")
        }
        return frame
    }

    @Test func messagesBothWaysMakeNoCipherContext() throws {
        var ends = try Self.established()
        defer { ends.close() }
        let before = ChaCha20Poly1305.contextsMadeOnThisThread
        for index in 0..<100 {
            try ends.device.send([UInt8(index), 1, 2])
            #expect(
                try ends.computer.receive(try Self.next(ends.computerConnection)) == [
                    FramedChannel.Output.message([UInt8(index), 1, 2])
                ])
            try ends.computer.send([UInt8(index), 3])
            #expect(
                try ends.device.receive(try Self.next(ends.deviceConnection)) == [
                    FramedChannel.Output.message([UInt8(index), 3])
                ])
        }
        // Before the fix, each received message made one (100 on each side).
        #expect(ChaCha20Poly1305.contextsMadeOnThisThread == before)
    }

    @Test func aHandshakeMakesContextsOnlyForItsCipherStates() throws {
        let before = ChaCha20Poly1305.contextsMadeOnThisThread
        let ends = try Self.established()
        defer { ends.close() }
        #expect(ChaCha20Poly1305.contextsMadeOnThisThread > before, "the counter counts this thread's contexts")
    }
}
