/// How long to wait before reconnecting: exponential backoff with jitter. Pure: the caller
/// supplies the randomness, so a test can pin every delay.
///
/// The n-th consecutive failure (n from 0) waits `min(maximumDelay, initialDelay × multiplier^n)`
/// less up to `jitter` of itself (so many clients thrown off at once do not return in step, and
/// no delay exceeds the maximum). A connection that stayed up longer than `resetAfter` seconds
/// starts the sequence over.
public struct RelayBackoff: Hashable, Sendable {
    public var initialDelay: Double
    public var maximumDelay: Double
    public var multiplier: Double
    /// The fraction of a delay taken off at most, 0 to 1.
    public var jitter: Double
    /// Seconds a connection must last for the next failure to count as the first again.
    public var resetAfter: Double
    /// Failures since the last reset: the exponent of the next delay.
    public private(set) var attempt = 0

    public init(
        initialDelay: Double = 0.5, maximumDelay: Double = 30, multiplier: Double = 2, jitter: Double = 0.2,
        resetAfter: Double = 30
    ) {
        precondition(initialDelay >= 0 && maximumDelay >= initialDelay && multiplier >= 1, "bad backoff bounds")
        precondition((0...1).contains(jitter), "jitter is a fraction from 0 to 1")
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
        self.resetAfter = resetAfter
    }

    /// The delay before the next attempt, given `random` uniform in 0...1; counts the failure.
    public mutating func nextDelay(random: Double) -> Double {
        var base = initialDelay
        var step = 0
        while step < attempt && base < maximumDelay {
            base *= multiplier
            step += 1
        }
        base = min(base, maximumDelay)
        if attempt < 1 << 20 { attempt += 1 }
        return base * (1 - jitter * min(max(random, 0), 1))
    }

    /// `nextDelay` with randomness from `generator`.
    public mutating func nextDelay(using generator: inout some RandomNumberGenerator) -> Double {
        nextDelay(random: Double.random(in: 0...1, using: &generator))
    }

    /// A connection that was admitted has ended after `duration` seconds: one that lasted longer
    /// than `resetAfter` resets the sequence.
    public mutating func connectionEnded(after duration: Double) {
        if duration > resetAfter { attempt = 0 }
    }

    public mutating func reset() { attempt = 0 }

    /// Seconds a connection must have been up for its drop to be retried at once, skipping the
    /// backoff (the relay node holding it died, the network blinked: a new connection is likely
    /// to work now). One that drops sooner backs off, so a link that drops as soon as it is up
    /// cannot spin.
    public static let steadyConnection = 2.0

    /// The wait before coming back to a relay that sent the client to retry soon (4421
    /// `reshard`): 0.25 to 0.5 seconds, jittered so clients moved together do not return together.
    public static func soonDelay(random: Double) -> Double { 0.5 - 0.25 * min(max(random, 0), 1) }
}
