import HerdrAgents
import NoiseRoads
import PeerGate

/// What a device's connection attaches, tells and ends with: `DeviceConnection`'s public words.
extension DeviceConnectionMachine {
    /// What a connection attaches: a herdr session by name (nil: herdr's default), or an agent's pane.
    public enum Attach: Sendable, Equatable {
        case session(String?)
        case agent(AgentKey)
    }

    public enum Event: Sendable, Equatable {
        /// A connection is up over this road (before the session starts or resumes on it).
        case connected(via: NoiseRoad)
        /// The computer said where its home door listens now.
        case homeAddresses([HomeAddress])
        /// The session moved to this road without a drop (`because` says why).
        case moved(to: NoiseRoad, because: MoveReason)
        /// The session runs (the first time).
        case started
        /// The link dropped; attempt `attempt` comes after a backoff.
        case reconnecting(attempt: Int, reason: String)
        /// Back on the same session, from the last byte received.
        case resumed
        /// The computer had lost the session (`reason`); a fresh one runs.
        case attachedAfresh(reason: String)
        /// This connection registered the room with the relay (keep `registered`).
        case registered
        /// The computer's agents board, whole, each time it changed (only while watching agents).
        case agents(AgentBoard)
        /// The last event.
        case finished(Termination)
    }

    /// Why the session moved to another connection while the old one had not dropped.
    public enum MoveReason: Sendable, Equatable {
        /// A home channel came up while the session ran over the relay.
        case homeIsBack
        /// A ping was out and nothing came for this many seconds: a fresh connection won the race.
        case pathWentQuiet(seconds: Double)
        /// The network moved away from under the old connection (`change` says how): a fresh
        /// connection won the race.
        case networkChanged(String)
    }

    public enum Termination: Sendable, Equatable {
        case exited(status: Int32?, signal: String?)
        case cancelled
        case failed(Failure)
    }

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Kind: Sendable, Equatable {
            /// Pair again: the room is gone or the relay no longer takes the join key.
            case pairingGone
            /// The computer or the relay could not be reached when the session was to start.
            case unreachable
            /// The relay refused for good: its daily quota, another connection of this device.
            case relayRefused
            /// The link dropped and reconnecting gave up.
            case connectionLost
            /// The computer refused the session, or it could not start there.
            case sessionRefused
            /// The agent to open is not on the computer's board (refusal reason 6), or the
            /// caller found no single agent for what the person named.
            case agentNotFound
            /// The computer cannot list its agents (herdr missing or failing there, or a
            /// herdr-host older than the agents family), as the caller found.
            case agentsUnavailable
            /// The computer broke the session protocol.
            case protocolViolation
            /// The output sink failed (the local terminal went away).
            case local
        }

        public let kind: Kind
        public let message: String
        public var description: String { message }

        public init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }
    }
}
