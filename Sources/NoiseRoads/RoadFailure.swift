import Foundation

/// Why an attempt over the Noise roads (either road) did not give a channel, and what that means
/// for retrying.
public enum RoadFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The pairing is gone: the room was deleted or expired, or the relay no longer accepts
    /// the join key. Retrying cannot help; pairing again can.
    case pairingGone(String)
    /// The connection or channel failed: later may work.
    case unavailable(String)
    /// The computer is not parked in the room now (`mac offline`): herdr-host is not running,
    /// or is between two parks (it parks again right after each device leaves).
    case computerOffline(relay: String)
    /// The relay closed the room for its daily byte quota: retrying before it resets cannot help.
    /// The quota is a rolling 24 hours from the room's first traffic, so it resets by
    /// `resetsBy` (a day after the refusal) at the latest.
    case quotaExceeded(relay: String, resetsBy: Date)
    /// Another connection of this device took the relay room (a second `connect`).
    case displaced
    /// The relay refused for a reason retrying cannot mend.
    case refused(String)
    /// The relay is a cluster moving this room to another of its nodes (4421 `reshard`, HTTP
    /// 421): try again shortly.
    case resharding(relay: String)

    static func utc(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }

    public var description: String {
        switch self {
        case .quotaExceeded(let relay, let resetsBy):
            "the relay \(relay) closed the room: this pairing has used up its daily byte quota. It resets within 24 hours (by \(Self.utc(resetsBy)) at the latest); retrying before then cannot help"
        case .computerOffline(let relay):
            "the computer is not connected to the relay \(relay) (is `herdr-host run` going on it?)"
        case .displaced:
            "another connection from this device took its place in the relay room (a second herdr-remote connect?)"
        case .refused(let why): "the relay refused the connection (\(why))"
        case .pairingGone(let why):
            "the pairing was removed on the computer, or it expired (\(why)); pair again with a new code from herdr-host pair"
        case .unavailable(let why): why
        case .resharding(let relay): "the relay \(relay) is moving this room to another of its nodes"
        }
    }
}
