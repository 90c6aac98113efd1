import CLISupport
import Foundation
import HerdrAgents
import HerdrKit
import PeerGate

/// What `herdr-host run` is doing, in `agent.json`, for `herdr-host status`: which process, since
/// when, and each device room's state. Rewritten (atomically, 0600) whenever a state changes.
public struct AgentStatus: Codable, Hashable, Sendable {
    public var pid: Int32
    public var startTime: UInt64
    public var bootID: String
    public var startedAt: Date
    public var rooms: [Room]
    /// The home door, when it is on.
    public var home: HomeDoorStatus?
    /// herdr as herdr-host last read it (nil: not since it started; it reads herdr while a
    /// device watches the agents).
    public var herdr: HerdrStatus?

    /// herdr's state, its sessions' and how many agents it has, the same `since`.
    public struct HerdrStatus: Codable, Hashable, Sendable {
        /// `ready`, `not-installed`, `failing`.
        public var state: String
        public var detail: String?
        public var sessions: [Session]
        /// Agents on the board, and those past its bound.
        public var agents: Int
        public var omitted: Int
        public var blocked: Int
        /// Whether herdr-host reads herdr now (a device watches, or did within a minute).
        public var watching: Bool
        /// When herdr-host found it so.
        public var since: Date

        public struct Session: Codable, Hashable, Sendable {
            public var name: String
            /// `ready`, `not-running`, `unsupported`, `unresponsive`, `failing`.
            public var state: String
            public var detail: String?
        }

        public init(_ board: AgentBoard, since: Date) {
            state = board.herdr.state.rawValue
            detail = board.herdr.detail
            sessions = board.sessions.map { Session(name: $0.name, state: $0.state.rawValue, detail: $0.detail) }
            agents = board.agents.count
            omitted = board.omitted
            blocked = board.agents.values.filter { $0.status == .blocked }.count
            watching = true
            self.since = since
        }

        /// Whether `other` says the same but for since when.
        public func isSameState(as other: HerdrStatus?) -> Bool {
            guard var other else { return false }
            other.since = since
            return other == self
        }
    }

    public struct Room: Codable, Hashable, Sendable {
        public var device: UUID
        public var name: String
        /// `parked`, `connected`, `waiting: …`, `stopped: …`.
        public var state: String
        public var since: Date
    }

    /// What the home door is doing: where it listens (or why it cannot), what it tells devices,
    /// whom it refused, and how the last device arrived (set only once a paired device's
    /// handshake succeeded: an admitted stranger never overwrites it).
    public struct HomeDoorStatus: Codable, Hashable, Sendable {
        public var listen: String
        /// Nil while listening; why not otherwise.
        public var error: String?
        public var addresses: [String]
        public var refusedCount: Int
        public var lastRefused: PeerGateStatus.RefusedPeer?
        /// Admitted peers whose handshake matched no paired device (or failed).
        public var failedHandshakes: Int
        public var lastDevice: Arrival?

        public struct Arrival: Codable, Hashable, Sendable {
            public var name: String
            public var peer: String
            public var at: Date
        }
    }

    /// Whether the agent that wrote this still runs.
    public var isRunning: Bool {
        ProcessIdentity(pid: pid, startTime: startTime, bootID: bootID).isAlive
    }

    public static func load(_ directory: AgentDirectory) throws(StorageError) -> AgentStatus? {
        guard let bytes = try AtomicFile.readIfPresent(directory.agentStatusFile, maxBytes: 1 << 20) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let status = try? decoder.decode(AgentStatus.self, from: Data(bytes)) else {
            throw StorageError(
                .corrupt, path: directory.agentStatusFile.path,
                message: "\(directory.agentStatusFile.path) is not a valid status file")
        }
        return status
    }

    public func save(_ directory: AgentDirectory) throws(StorageError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(self) else {
            throw StorageError(.encode, path: directory.agentStatusFile.path, message: "Could not encode the status")
        }
        try AtomicFile.write([UInt8](data) + [0x0A], to: directory.agentStatusFile, mode: 0o600)
    }
}
