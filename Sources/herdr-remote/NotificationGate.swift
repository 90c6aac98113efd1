/// How often `watch` alerts (bell, terminal escapes, desktop notification), with the time passed in
/// (seconds, any monotonic origin). Pure. The rule:
///
/// 1. The same agent (computer, session, pane) in the same status is told at most once in
///    `repeatInterval` (60 s): one that flaps between `working` and `blocked` is told once a
///    minute. A repeat is not alerted, not run with `--exec`; without a terminal its line is
///    still printed.
/// 2. At most `burst` (3) alerts in any `window` (10 s): past it, alerts are held, and once the
///    window has room again one alert names them all ("4 more agents blocked or done"). `--exec`
///    runs for held ones too (each event once, in order).
struct NotificationGate: Sendable {
    static let repeatInterval = 60.0
    static let burst = 3
    static let window = 10.0
    /// Held notices kept for the summary (more are counted).
    static let maximumHeld = 64

    enum Decision: Equatable {
        /// Alert now, and run `--exec`.
        case alert
        /// Run `--exec`; the alert waits for the summary.
        case held
        /// Told already within `repeatInterval`: nothing but the line.
        case repeated
    }

    private var lastTold: [String: Double] = [:]
    private var alerts: [Double] = []
    private(set) var held: [AgentNotice] = []
    private var heldBeyond = 0

    /// What to do with `notice` at `now`.
    mutating func admit(_ notice: AgentNotice, now: Double) -> Decision {
        lastTold = lastTold.filter { now - $0.value < Self.repeatInterval }
        let key = [notice.computer, notice.agent.session, notice.agent.pane, notice.agent.status.rawValue].joined(
            separator: "\u{0}")
        if lastTold[key] != nil { return .repeated }
        lastTold[key] = now
        alerts.removeAll { now - $0 >= Self.window }
        guard alerts.count < Self.burst, held.isEmpty, heldBeyond == 0 else {
            if held.count < Self.maximumHeld { held.append(notice) } else { heldBeyond += 1 }
            return .held
        }
        alerts.append(now)
        return .alert
    }

    /// The summary of held notices, once the window has room again: its title and body.
    mutating func summary(now: Double) -> (title: String, body: String)? {
        alerts.removeAll { now - $0 >= Self.window }
        guard !held.isEmpty, alerts.count < Self.burst else { return nil }
        let count = held.count + heldBeyond
        let names = held.prefix(5).map { "\($0.computer)/\($0.agent.displayName)" }
        let more = count > names.count ? ", …" : ""
        held.removeAll()
        heldBeyond = 0
        alerts.append(now)
        return ("\(count) more agents blocked or done", names.joined(separator: ", ") + more)
    }
}
