import Foundation
import Glibc
import RelayProtocol

/// Many admissions at once from one thread with poll: connect, upgrade + Hello, Challenge, Proof,
/// Result; then keep the socket (parked rooms) or close it (signed joins).
struct ConcurrentAdmissions {
    struct Client {
        var source: String
        var room: String
        var role: RelayRole
        /// The proof JSON for a nonce.
        var proof: ([UInt8]) -> String
    }

    private enum Stage { case connecting, head, challenge, result }

    private struct InFlight {
        var fd: Int32
        var stage: Stage
        var buffer: [UInt8]
        var client: Client
    }

    let port: UInt16
    let concurrency: Int
    let keepOpen: Bool

    struct Outcome {
        var admitted = 0
        var failed = 0
        var seconds = 0.0
        var openDescriptors: [Int32] = []
        var firstFailure: String?
    }

    /// Runs `total` admissions, client `i` described by `client(i)`.
    func run(total: Int, client: (Int) -> Client) -> Outcome {
        var outcome = Outcome()
        var flights: [InFlight] = []
        var next = 0
        let start = now()
        func fail(_ flight: InFlight, _ why: String) {
            close(flight.fd)
            outcome.failed += 1
            if outcome.firstFailure == nil { outcome.firstFailure = why }
        }
        func launch() {
            while flights.count < concurrency && next < total && outcome.failed < 100 {
                let description = client(next)
                next += 1
                do {
                    let fd = try RelayBenchDriver.connect(port: port, source: description.source, blocking: false)
                    flights.append(InFlight(fd: fd, stage: .connecting, buffer: [], client: description))
                } catch {
                    outcome.failed += 1
                    if outcome.firstFailure == nil { outcome.firstFailure = "\(error)" }
                }
            }
        }
        launch()
        var polls: [pollfd] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !flights.isEmpty {
            polls = flights.map {
                pollfd(fd: $0.fd, events: Int16($0.stage == .connecting ? POLLOUT : POLLIN), revents: 0)
            }
            guard poll(&polls, nfds_t(polls.count), 5000) > 0 else {
                for flight in flights { fail(flight, "no answer within 5 s") }
                flights.removeAll()
                break
            }
            var finished: [Int] = []
            for index in flights.indices where polls[index].revents != 0 {
                var flight = flights[index]
                if flight.stage == .connecting {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(flight.fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    guard error == 0,
                        (try? RelayBenchDriver.writeAll(
                            flight.fd,
                            RelayBenchDriver.upgradeRequest(room: flight.client.room)
                                + RelayBenchDriver.hello(flight.client.role))) != nil
                    else {
                        fail(flight, "connect: \(String(cString: strerror(error)))")
                        finished.append(index)
                        continue
                    }
                    flight.stage = .head
                    flights[index] = flight
                    continue
                }
                let got = chunk.withUnsafeMutableBytes { recv(flight.fd, $0.baseAddress, $0.count, 0) }
                if got <= 0 {
                    if got < 0 && errno == EAGAIN { continue }
                    fail(flight, "connection ended in \(flight.stage)")
                    finished.append(index)
                    continue
                }
                flight.buffer += chunk[0..<got]
                var done = false
                var broken: String?
                progress: while true {
                    switch flight.stage {
                    case .connecting: break progress
                    case .head:
                        guard let end = Self.headEnd(flight.buffer) else { break progress }
                        guard flight.buffer.starts(with: Array("HTTP/1.1 101".utf8)) else {
                            broken = "refused: \(String(decoding: flight.buffer.prefix(40), as: UTF8.self))"
                            break progress
                        }
                        flight.buffer.removeFirst(end)
                        flight.stage = .challenge
                    case .challenge:
                        guard let text = Self.takeTextFrame(&flight.buffer) else { break progress }
                        guard let challenge = RelayChallenge.parse(text) else {
                            broken = "no challenge: \(text)"
                            break progress
                        }
                        let proof = RelayBenchDriver.frame(opcode: 1, Array(flight.client.proof(challenge.nonce).utf8))
                        if (try? RelayBenchDriver.writeAll(flight.fd, proof)) == nil { broken = "proof not sent" }
                        flight.stage = .result
                    case .result:
                        guard let text = Self.takeTextFrame(&flight.buffer) else { break progress }
                        guard case .admitted = RelayResult.parse(text) else {
                            broken = "not admitted: \(text)"
                            break progress
                        }
                        done = true
                        break progress
                    }
                    if broken != nil { break }
                }
                if let broken {
                    fail(flight, broken)
                    finished.append(index)
                } else if done {
                    outcome.admitted += 1
                    if keepOpen { outcome.openDescriptors.append(flight.fd) } else { close(flight.fd) }
                    finished.append(index)
                } else {
                    flights[index] = flight
                }
            }
            for index in finished.sorted(by: >) { flights.remove(at: index) }
            launch()
        }
        outcome.seconds = now() - start
        return outcome
    }

    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }

    /// A complete short unmasked text frame from the front of `buffer`, removed; nil if incomplete.
    static func takeTextFrame(_ buffer: inout [UInt8]) -> String? {
        guard buffer.count >= 2 else { return nil }
        var length = Int(buffer[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            offset = 4
        }
        guard buffer.count >= offset + length else { return nil }
        let text = String(decoding: buffer[offset..<(offset + length)], as: UTF8.self)
        buffer.removeFirst(offset + length)
        return text
    }
}
