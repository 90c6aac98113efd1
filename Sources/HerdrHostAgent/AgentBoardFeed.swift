import HerdrAgents
import HerdrWatch

/// One channel's watch of the agents board (docs/companion.md, "Agents"), pure, with the time
/// passed in: after `{"agents":{"v":1,"watch":true}}` the whole board, then only what changed,
/// coalesced: a change within `coalescing` of the last message waits for the end of that time
/// and goes with whatever else changed meanwhile. The shell sends what `next` gives, one message
/// per frame of the device's budget. `seq` grows over the channel's life, across watches.
struct AgentBoardFeed: Sendable {
    /// Changes within this many seconds of the last message go together, at its end.
    static let coalescing = 0.1
    /// The first board waits at most this long for herdr's sessions to have had their first look
    /// (after it, a session still being read says so on the board).
    static let firstBoardWait = 3.0

    /// The board before herdr-host has read herdr at all.
    static let notRead = AgentBoard(herdr: HerdrAvailability(.failing, detail: "herdr-host has not read herdr yet"))

    private(set) var isWatching = false
    private var sequence: UInt32 = 1
    /// The board the device has once `outbox` is sent; nil: it is owed a whole board.
    private var sent: AgentBoard?
    private var outbox: [AgentBoardMessage] = []
    private var lastSentAt = -Double.infinity
    private var watchedAt = 0.0

    /// Starts (or starts again) the watch: a whole board is owed.
    mutating func watch(now: Double) {
        isWatching = true
        sent = nil
        outbox = []
        watchedAt = now
    }

    mutating func unwatch() {
        isWatching = false
        sent = nil
        outbox = []
    }

    /// Whether a message may go now (the frame budget aside).
    func isDue(_ report: HerdrWatch.Report, now: Double) -> Bool {
        guard isWatching else { return false }
        if !outbox.isEmpty { return true }
        guard let sent else { return report.isSettled || now >= watchedAt + Self.firstBoardWait }
        return Self.board(report) != sent && now >= lastSentAt + Self.coalescing
    }

    /// When a message will be due, if nothing else changes (nil: none is owed).
    func nextDeadline(_ report: HerdrWatch.Report, now: Double) -> Double? {
        guard isWatching else { return nil }
        if !outbox.isEmpty { return now }
        guard let sent else { return report.isSettled ? now : watchedAt + Self.firstBoardWait }
        return Self.board(report) == sent ? nil : max(now, lastSentAt + Self.coalescing)
    }

    /// The next message, when one is due: a part of a whole board, or the changes since the last.
    mutating func next(_ report: HerdrWatch.Report, now: Double) -> AgentBoardMessage? {
        guard isDue(report, now: now) else { return nil }
        if outbox.isEmpty {
            let board = Self.board(report)
            if let sent {
                outbox = AgentBoardMessage.changes(from: sent, to: board, sequence: &sequence)
            } else {
                outbox = AgentBoardMessage.full(board, sequence: &sequence)
            }
            sent = board
        }
        guard !outbox.isEmpty else { return nil }
        lastSentAt = now
        return outbox.removeFirst()
    }

    private static func board(_ report: HerdrWatch.Report) -> AgentBoard {
        report.isRunning ? report.board : notRead
    }
}
