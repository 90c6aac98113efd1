/// Why the emulator dropped a packet.
public enum DropReason: String, CaseIterable, Sendable {
    /// The link is blackholed.
    case blackhole
    /// The link is cut and the packet's flow was seen before the cut.
    case cut
    /// Independent loss.
    case loss
    /// Gilbert–Elliott burst loss.
    case burst
    /// The rate limit's queue was full (tail drop).
    case queue
    /// No link owns the destination address.
    case noRoute = "no-route"
    /// Not an IPv4 or IPv6 packet the emulator can read.
    case malformed
    /// More packets or bytes in flight than the emulator holds.
    case inFlight = "in-flight"
    /// Writing it to the destination's interface failed (the interface is down, say).
    case undeliverable
}

/// What one direction of a link carried and dropped.
public struct DirectionStatistics: Equatable, Sendable {
    public var passedPackets: UInt64 = 0
    public var passedBytes: UInt64 = 0
    public var dropped: [DropReason: UInt64] = [:]

    public init() {}

    public var droppedPackets: UInt64 { dropped.values.reduce(0, +) }

    mutating func drop(_ reason: DropReason) { dropped[reason, default: 0] += 1 }

    /// `passed=N bytes=N dropped=N` then one `REASON=N` per reason, each key after `prefix`.
    func fields(prefix: String) -> [String] {
        ["\(prefix)passed=\(passedPackets)", "\(prefix)bytes=\(passedBytes)", "\(prefix)dropped=\(droppedPackets)"]
            + DropReason.allCases.map { "\(prefix)\($0.rawValue)=\(dropped[$0] ?? 0)" }
    }
}

/// Both directions of a link: `uplink` from its namespace into the emulator, `downlink` back.
public struct LinkStatistics: Equatable, Sendable {
    public var uplink = DirectionStatistics()
    public var downlink = DirectionStatistics()

    public init() {}

    /// One line of `key=value` fields: `uplink.passed=… uplink.bytes=… … downlink.passed=…`.
    public var fields: [String] { uplink.fields(prefix: "uplink.") + downlink.fields(prefix: "downlink.") }
}
