import Glibc

/// The relay's time: monotonic milliseconds for deadlines and rate windows, wall-clock seconds for
/// what is stored (expiries, activity, quota days). Injected so every timed rule is testable.
public protocol RelayClock: AnyObject {
    var milliseconds: Int64 { get }
    var unixSeconds: Int64 { get }
}

/// The machine's clocks.
public final class SystemRelayClock: RelayClock {
    public init() {}

    public var milliseconds: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    public var unixSeconds: Int64 { Int64(time(nil)) }
}

/// A clock that moves only when told: both readings advance together.
public final class ManualRelayClock: RelayClock {
    public private(set) var milliseconds: Int64
    private var wallMilliseconds: Int64

    public init(milliseconds: Int64 = 1_000_000, unixSeconds: Int64 = 1_800_000_000) {
        self.milliseconds = milliseconds
        self.wallMilliseconds = unixSeconds * 1000
    }

    public var unixSeconds: Int64 { wallMilliseconds / 1000 }

    public func advance(milliseconds delta: Int64) {
        milliseconds += delta
        wallMilliseconds += delta
    }

    public func advance(seconds: Int64) { advance(milliseconds: seconds * 1000) }
}
