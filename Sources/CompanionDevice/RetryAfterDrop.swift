import NoiseRoads
import RelayClient

/// How the first reconnect attempt after an established road dropped goes. Pure.
///
/// A road that had been up a while is retried at once, not after the backoff: a phone's new
/// socket takes its old one's slot at the relay (the computer never noticed), and a home road
/// that dropped leaves for the relay, another road, beside the home addresses and without their
/// head start. A road that drops as soon as it is up backs off, so a flapping link cannot spin.
public struct RetryAfterDrop: Equatable, Sendable {
    /// The attempt goes without the backoff's wait.
    public var atOnce: Bool
    /// The home addresses get their head start over the relay.
    public var homeFirst: Bool

    /// An attempt after the backoff, home first: every retry but the at-once one.
    public static let backingOff = RetryAfterDrop(atOnce: false, homeFirst: true)

    public init(atOnce: Bool, homeFirst: Bool) {
        self.atOnce = atOnce
        self.homeFirst = homeFirst
    }

    /// Seconds a road must have been up for its drop to skip the backoff (as a relay link's).
    public static let steadyRoad = RelayBackoff.steadyConnection

    /// The retry after `dropped` went down, having been up `upFor` seconds.
    /// `hasRelay`: the computer has a relay road; `choice`: the roads a connection may take.
    public static func after(
        _ dropped: NoiseRoad, upFor: Double, hasRelay: Bool, choice: DeviceRoads.Choice
    ) -> RetryAfterDrop {
        guard upFor >= steadyRoad else { return .backingOff }
        let leavesHome = dropped.isHome && hasRelay && choice == .any
        return RetryAfterDrop(atOnce: true, homeFirst: !leavesHome)
    }
}
