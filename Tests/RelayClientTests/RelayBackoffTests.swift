import Plumbing
import RelayClient
import RelayProtocol
import Testing

@Suite("Reconnect backoff and when to give up")
struct RelayBackoffTests {
    func isRetry(_ disposition: RelayLink.Disposition) -> Bool {
        if case .retry = disposition { return true }
        return false
    }

    @Test("doubles from 0.5 s to a 30 s ceiling without jitter")
    func doubling() {
        var backoff = RelayBackoff()
        let delays = (0..<10).map { _ in backoff.nextDelay(random: 0) }
        #expect(delays == [0.5, 1, 2, 4, 8, 16, 30, 30, 30, 30])
        #expect(backoff.attempt == 10)
    }

    @Test("jitter takes off at most its fraction, never adds")
    func jitter() {
        func near(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-9 }
        var backoff = RelayBackoff(jitter: 0.2)
        #expect(near(backoff.nextDelay(random: 1), 0.4))
        #expect(near(backoff.nextDelay(random: 0.5), 0.9))
        for _ in 0..<20 { _ = backoff.nextDelay(random: 0) }
        #expect(near(backoff.nextDelay(random: 1), 24))
        // Out-of-range randomness is clamped.
        #expect(near(backoff.nextDelay(random: 7), 24))
        #expect(near(backoff.nextDelay(random: -1), 30))
    }

    @Test("randomness from a generator stays within bounds")
    func generator() {
        /// xorshift64: deterministic, and never constant (a constant source can stall sampling).
        struct XorShift: RandomNumberGenerator {
            var state: UInt64
            mutating func next() -> UInt64 {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                return state
            }
        }
        var generator = XorShift(state: 0x9E37_79B9_7F4A_7C15)
        for _ in 0..<50 {
            var backoff = RelayBackoff()
            let first = backoff.nextDelay(using: &generator)
            let second = backoff.nextDelay(using: &generator)
            #expect(first >= 0.4 && first <= 0.5)
            #expect(second >= 0.8 && second <= 1)
        }
    }

    @Test("a connection that lasted over 30 s starts the sequence over; a short one does not")
    func reset() {
        var backoff = RelayBackoff()
        for _ in 0..<5 { _ = backoff.nextDelay(random: 0) }
        backoff.connectionEnded(after: 29)
        #expect(backoff.nextDelay(random: 0) == 16)
        backoff.connectionEnded(after: 31)
        #expect(backoff.attempt == 0)
        #expect(backoff.nextDelay(random: 0) == 0.5)
        backoff.reset()
        #expect(backoff.attempt == 0)
    }

    @Test("custom bounds")
    func customBounds() {
        var backoff = RelayBackoff(initialDelay: 0.05, maximumDelay: 0.3, multiplier: 3, jitter: 0)
        let delays = (0..<4).map { _ in backoff.nextDelay(random: 0.9) }
        #expect(delays.map { ($0 * 1000).rounded() } == [50, 150, 300, 300])
    }

    @Test("closes that mean don't retry stop the link; the others retry")
    func closes() {
        func after(_ close: RelayClose) -> RelayLink.Disposition { RelayLink.disposition(after: .closedByRelay(close)) }
        #expect(after(.roomDeleted) == .stop(.roomDeleted))
        #expect(after(.pairingCycleCap) == .stop(.pairingCycleCap))
        #expect(after(.displaced) == .stop(.displaced))
        #expect(after(.roomExpired) == .stop(.needsRepairing("room expired")))
        for close in [RelayClose.peerGone, .serverShuttingDown, .frameRateExceeded, .internalError, .admissionTimeout] {
            guard case .retry = after(close) else {
                Issue.record("\(close) should be retried")
                continue
            }
        }
        #expect(isRetry(RelayLink.disposition(after: .closedLocally)))
        #expect(isRetry(RelayLink.disposition(after: .failed(ConnectionError(.keepaliveTimeout, "x")))))
    }

    @Test("refusals that mean re-pair stop the link; transient ones retry")
    func refusals() {
        func refused(_ reason: String) -> RelayLink.Disposition {
            RelayLink.disposition(
                after: ConnectionError(
                    .refused, "refused", serverError: reason, close: RelayClose(code: 1008, reason: reason)))
        }
        #expect(refused("bad signature") == .stop(.needsRepairing("bad signature")))
        #expect(refused("signature required") == .stop(.needsRepairing("signature required")))
        #expect(refused("ticket required") == .stop(.refused("ticket required")))
        #expect(refused("bad proof") == .stop(.refused("bad proof")))
        for reason in ["mac offline", "slot occupied", "rate limited"] {
            guard case .retry = refused(reason) else {
                Issue.record("\(reason) should be retried")
                continue
            }
        }
        // A close before any Result (a phone over the pairing cycle cap gets only the close).
        let capped = ConnectionError(.closed, "closed", close: .pairingCycleCap)
        #expect(RelayLink.disposition(after: capped) == .stop(.pairingCycleCap))
        // A Hello the relay could not read is closed with no Result, as upstream does it.
        let badHello = ConnectionError(.closed, "closed", close: .refused(.badHello))
        #expect(RelayLink.disposition(after: badHello) == .stop(.refused("bad hello")))
        // HTTP: a refusal of the request itself stops; overload and proxies retry.
        #expect(
            RelayLink.disposition(after: ConnectionError(.httpStatus, "x", status: 403, serverError: "forbidden"))
                == .stop(.refused("HTTP 403 forbidden")))
        for status in [429, 502, 503] {
            guard case .retry = RelayLink.disposition(after: ConnectionError(.httpStatus, "x", status: status)) else {
                Issue.record("HTTP \(status) should be retried")
                continue
            }
        }
        #expect(isRetry(RelayLink.disposition(after: ConnectionError(.unreachable, "down"))))
        // Another relay node holds the room: come back soon (HTTP 421, close 4421 before or after admission).
        #expect(
            RelayLink.disposition(after: ConnectionError(.httpStatus, "x", status: 421, serverError: "reshard"))
                == .retrySoon(reason: "HTTP 421 reshard"))
        guard case .retrySoon = RelayLink.disposition(after: ConnectionError(.closed, "closed", close: .reshard))
        else {
            Issue.record("a 4421 close should be retried soon")
            return
        }
        guard case .retrySoon = RelayLink.disposition(after: .closedByRelay(.reshard)) else {
            Issue.record("a 4421 close after admission should be retried soon")
            return
        }
        // The reason alone is not enough: the code must be ours.
        guard case .retry = RelayLink.disposition(after: .closedByRelay(RelayClose(code: 1000, reason: "reshard")))
        else {
            Issue.record("a 1000 close is no reshard")
            return
        }
    }

    @Test("the soon delay is a quarter to half a second")
    func soonDelay() {
        #expect(RelayBackoff.soonDelay(random: 0) == 0.5)
        #expect(RelayBackoff.soonDelay(random: 1) == 0.25)
        #expect(RelayBackoff.soonDelay(random: 7) == 0.25)
        #expect(RelayBackoff.soonDelay(random: -1) == 0.5)
    }
}
