import Foundation
import Glibc
import HerdrCrypto
import TestSupport
import Testing

/// Whatever bytes a peer sends, the relay stays up: random bytes, random bytes after a valid
/// upgrade, and mutated admission frames, over real sockets; then `/healthz` still answers and a
/// mac and a phone are still admitted and spliced.
@Suite(.serialized) struct HostileInputTests {
    static let upgrade =
        "GET / HTTP/1.1\r\nHost: relay.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"

    static func masked(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else {
            out += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        out += [1, 2, 3, 4]
        for (index, byte) in payload.enumerated() { out.append(byte ^ UInt8(index % 4 + 1)) }
        return out
    }

    @Test func randomAndMutatedInputNeverTakesTheRelayDown() throws {
        // Every socket here comes from 127.0.0.1: lift the per-address upgrade rate, or the
        // limit (not the input) would be what refuses the final check.
        let relay = try RelayFixture { $0.upgradesPerMinute = 10_000 }
        var random = SystemRandomNumberGenerator()
        for round in 0..<300 {
            let fd = try ShellLimitsTests.idleConnection(port: relay.port)
            defer { close(fd) }
            var bytes: [UInt8]
            let room = Hex.encode(SecureRandom.bytes(32))
            switch round % 3 {
            case 0:
                bytes = (0..<Int.random(in: 1...3000, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            case 1:
                bytes = Array((Self.upgrade + "x-relay-room: \(room)\r\n\r\n").utf8)
                bytes += (0..<Int.random(in: 1...3000, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            default:
                bytes = Array((Self.upgrade + "x-relay-room: \(room)\r\n\r\n").utf8)
                var frames =
                    Self.masked(1, Array("{\"v\":1,\"role\":\"mac\"}".utf8)) + Self.masked(1, Array("{}".utf8))
                    + Self.masked(2, [UInt8](repeating: 7, count: 300), fin: false) + Self.masked(0, [1, 2, 3])
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    frames[Int.random(in: 0..<frames.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                bytes += frames
            }
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if round % 50 == 49 { Thread.sleep(forTimeInterval: 0.05) }
        }
        // Still serving: health, and a fresh room splices.
        let health = try ProcessRunner.run(
            "python3",
            [
                "-c",
                "import urllib.request,sys; print(urllib.request.urlopen(f'http://127.0.0.1:{sys.argv[1]}/healthz').read().decode())",
                String(relay.port),
            ], timeout: 20)
        #expect(health.stdout.contains("\"ok\":true"), "\(health.stderr)")
        let room = Hex.encode(SecureRandom.bytes(32))
        let report = try PythonPeer.run("splice", port: relay.port, room: room)
        #expect(report["phone.got"] == "to phone" && report["mac.got"] == "to mac", "\(report)")
    }
}
