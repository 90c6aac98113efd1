/// The output window a device asks for, sized to the path (docs/companion.md, "Output and
/// credit"): about two bandwidth-delay products, plus what arrives between two credits, with a
/// floor and the configured window as its ceiling. Every byte the window lets the computer send
/// ahead sits somewhere on the path (the relay's and the kernels' buffers, a slow link's queue),
/// and the answer to a keystroke (a Ctrl-C's prompt) waits behind all of it: a window of the
/// path's size keeps that wait to a couple of round trips while still filling the path.
///
/// The bandwidth is the delivery rate over the last few intervals in which output flowed (their
/// bytes over their time, not the best of them: output reaches the screen a message at a time,
/// and on the relay road a message can be a quarter of a megabyte, so one short interval can hold
/// two messages that crossed the path in two; the best interval read 9 MB/s off a 2.5 MB/s link
/// and asked for a 3.6 MB window); the delay the least round trip the pings measured. Pure: the
/// time is passed in.
public struct PathWindow: Sendable {
    /// The smallest window asked for.
    public static let floor = 256 * 1024
    /// Seconds of one delivery-rate sample.
    public static let interval = 0.1
    /// Samples the best rate is taken from.
    public static let samples = 8
    /// Seconds between two credits when they come as fast as the device's frame budget lets them
    /// (half of its 32 frames a second): the window must carry what arrives meanwhile.
    public static let creditInterval = 1.0 / 16

    public let ceiling: Int
    /// The window asked for now.
    public private(set) var current: Int
    /// The least round trip seen, in seconds.
    public private(set) var minimumRTT: Double?
    private var intervalStart: Double?
    private var intervalBytes = 0
    /// The last flowing intervals: bytes, seconds.
    private var intervals: [(bytes: Int, seconds: Double)] = []

    /// `ceiling`: the most the device holds (its configured window).
    public init(ceiling: Int) {
        self.ceiling = ceiling
        current = min(ceiling, Self.floor)
    }

    /// A round trip measured by a ping.
    public mutating func roundTrip(_ seconds: Double) {
        minimumRTT = min(minimumRTT ?? seconds, seconds)
    }

    /// `count` bytes of output arrived at `now`: the window to ask for, when it should change.
    public mutating func received(_ count: Int, now: Double) -> Int? {
        guard let start = intervalStart else {
            intervalStart = now
            intervalBytes = count
            return nil
        }
        intervalBytes += count
        let elapsed = now - start
        guard elapsed >= Self.interval else { return nil }
        // Only an interval in which output flowed (a credit's worth of the smallest window came)
        // says anything about the path; a quiet one (typing, an idle screen) leaves the window as
        // it is. A credit's worth of a window grown too large is more than the path carries in
        // an interval: it would never count, and the window never come back down.
        let flowing = intervalBytes >= min(current, Self.floor) / 4
        let interval = (bytes: intervalBytes, seconds: elapsed)
        intervalStart = now
        intervalBytes = 0
        guard flowing else { return nil }
        intervals.append(interval)
        if intervals.count > Self.samples { intervals.removeFirst(intervals.count - Self.samples) }
        let rate =
            Double(intervals.reduce(0) { $0 + $1.bytes }) / intervals.reduce(0) { $0 + $1.seconds }
        let wanted = 2 * rate * ((minimumRTT ?? 0) + Self.creditInterval)
        let target = max(min(ceiling, Self.floor), min(ceiling, Int(wanted.rounded(.up))))
        // A quarter either way before it is worth a message.
        guard abs(target - current) * 4 > current else { return nil }
        current = target
        return target
    }
}
