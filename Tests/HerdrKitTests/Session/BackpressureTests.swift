import Foundation
import HerdrKit
import TestSupport
import Testing

/// Output backpressure: a blocked consumer stalls the host in its SSH window, not client memory.
@Suite("Backpressure") @MainActor
struct BackpressureTests {
    static let total = 64 * 1024 * 1024

    @Test("a consumer blocked for 3 s holds back a 64 MB writer; every byte then arrives in order")
    func blockedConsumerStallsTheWriter() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let marker = server.directory.appending("run/writer-done")
        // Numbers separated by spaces: no newlines, so the PTY passes the bytes unchanged and order is checkable.
        let generator = "seq -s ' ' 1 9000000 | head -c \(Self.total)"
        let session = harness.session(harness.profile(command: "\(generator); touch \(marker.path); sleep 0.5"))
        var stalled = false
        var writerDoneAtStallEnd: Bool?
        var received: [UInt8] = []
        received.reserveCapacity(Self.total)
        var largestChunk = 0
        session.onOutput = { bytes in
            received += bytes
            largestChunk = max(largestChunk, bytes.count)
            if !stalled {
                stalled = true
                usleep(3_000_000)  // blocks the MainActor, as a stuck UI would
                writerDoneAtStallEnd = FileManager.default.fileExists(atPath: marker.path)
            }
        }
        await session.connect(cols: 80, rows: 24)
        try await harness.waitUntil("all 64 MB", timeout: 120) { received.count >= Self.total || session.state.isFinal }
        #expect(writerDoneAtStallEnd == false)
        #expect(received.count == Self.total)
        let expected = try ProcessRunner.run("/bin/sh", ["-c", generator], timeout: 60).stdoutBytes
        #expect(expected.count == Self.total)
        #expect(received == expected)
        #expect(largestChunk <= TerminalSessionOptions().maximumChunk)
        try await harness.waitUntil("writer finished") { FileManager.default.fileExists(atPath: marker.path) }
        session.disconnect()
    }
}
