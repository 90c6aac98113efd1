/// When to try reattaching after a connection drops: exponential backoff with a ceiling,
/// giving up after a number of attempts. Pure, so the schedule is testable without waiting.
public struct ReconnectPolicy: Sendable, Equatable {
    public var initialDelay: Duration
    public var maximumDelay: Duration
    /// Attempts before the session gives up and fails; 0 disables reattaching.
    public var maximumAttempts: Int

    public init(
        initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(15), maximumAttempts: Int = 10
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumAttempts = maximumAttempts
    }

    /// Never reattach: a dropped connection fails the session at once.
    public static let never = ReconnectPolicy(maximumAttempts: 0)

    /// The wait before attempt `attempt` (1-based), or nil when the policy gives up.
    /// 0.5 s, 1 s, 2 s, 4 s, … capped at `maximumDelay`: about two minutes over ten attempts.
    public func delay(beforeAttempt attempt: Int) -> Duration? {
        guard attempt >= 1, attempt <= maximumAttempts else { return nil }
        var delay = initialDelay
        for _ in 1..<attempt {
            delay = delay * 2
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }
}
