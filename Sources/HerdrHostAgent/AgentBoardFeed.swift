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

    private(set) var isWatching = false
    private var sequence: UInt32 = 1
    /// The board the device has once `outbox` is sent, and its version; nil: it is owed a whole board.
    private var sent: (board: AgentBoard, version: Int)?
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
    func isDue(_ current: CurrentAgentBoard, now: Double) -> Bool {
        guard isWatching else { return false }
        if !outbox.isEmpty { return true }
        guard let sent else { return current.isSettled || now >= watchedAt + Self.firstBoardWait }
        return current.version != sent.version && now >= lastSentAt + Self.coalescing
    }

    /// When a message will be due, if nothing else changes (nil: none is owed).
    func nextDeadline(_ current: CurrentAgentBoard, now: Double) -> Double? {
        guard isWatching else { return nil }
        if !outbox.isEmpty { return now }
        guard let sent else { return current.isSettled ? now : watchedAt + Self.firstBoardWait }
        return current.version == sent.version ? nil : max(now, lastSentAt + Self.coalescing)
    }

    /// The next message, when one is due: a part of a whole board, or the changes since the last.
    mutating func next(_ current: CurrentAgentBoard, now: Double) -> AgentBoardMessage? {
        guard isDue(current, now: now) else { return nil }
        if outbox.isEmpty {
            if let sent {
                outbox = AgentBoardMessage.changes(from: sent.board, to: current.board, sequence: &sequence)
            } else {
                outbox = AgentBoardMessage.full(current.board, sequence: &sequence)
            }
            sent = (current.board, current.version)
        }
        guard !outbox.isEmpty else { return nil }
        lastSentAt = now
        return outbox.removeFirst()
    }
}

/// The computer's board as the feeds read it: the board, a version that changes whenever the
/// board does (so a feed tells a change without comparing boards on each pass of the loop, which
/// runs after every keystroke), and whether herdr had its first look.
struct CurrentAgentBoard: Sendable {
    private(set) var board = AgentBoard.notRead
    private(set) var version = 0
    /// The herdr watch reads herdr now.
    private(set) var isRunning = false
    /// Every session had its first look: the board says something true of each.
    private(set) var isSettled = false

    init() {}

    /// What the herdr watch reported (a stopped watch's board is `AgentBoard.notRead`).
    mutating func update(_ report: HerdrWatch.Report) {
        let board = report.isRunning ? report.board : AgentBoard.notRead
        if board != self.board {
            self.board = board
            version += 1
        }
        isRunning = report.isRunning
        isSettled = report.isSettled
    }

    /// A board fresh enough to check an `open agent` against.
    var isFresh: Bool { isRunning && isSettled }
}
