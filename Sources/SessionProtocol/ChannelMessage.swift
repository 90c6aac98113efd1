import HerdrAgents

/// One application message inside the end-to-end channel, told apart by its first byte
/// (docs/companion.md, "Inside the channel"): `{` starts a control message, 0x01–0x1F a session
/// protocol message (0x0D among them the agents family's board); any other first byte, and an
/// empty message, end the channel. The one rule both sides read the other's messages by.
public enum ChannelMessage: Hashable, Sendable {
    case control(CompanionMessage)
    case session(SessionMessage)
    /// Computer → device, once the device asked to watch agents: part of a board or its changes
    /// (`0x0D`, version 1, then the JSON body).
    case agents(AgentBoardMessage)

    /// The type byte of the agents family's messages, among the session protocol's.
    public static let agentsType: UInt8 = 0x0D
    /// The agents family's version.
    public static let agentsVersion: UInt8 = 1

    /// An agents message as the channel carries it.
    public static func bytes(of message: AgentBoardMessage) -> [UInt8] {
        [agentsType, agentsVersion] + message.body
    }

    /// What a message is by its first byte alone.
    public enum Kind: Hashable, Sendable {
        case control
        case session
        /// Neither (an empty message too): the channel ends.
        case invalid

        public init(firstByteOf bytes: [UInt8]) {
            switch bytes.first {
            case UInt8(ascii: "{"): self = .control
            case .some(0x01...0x1F): self = .session
            default: self = .invalid
            }
        }
    }

    /// Parses one message by its kind; throws, saying what the peer sent, for a first byte of
    /// neither kind, an empty message, or a malformed message of either kind.
    public init(parsing bytes: [UInt8]) throws(ChannelMessageError) {
        switch Kind(firstByteOf: bytes) {
        case .control:
            do {
                self = .control(try CompanionMessage(parsing: bytes))
            } catch {
                throw ChannelMessageError("a malformed control message (\(error))")
            }
        case .session where bytes.first == Self.agentsType:
            guard bytes.count >= 2, bytes[1] == Self.agentsVersion else {
                throw ChannelMessageError("an agents message of a version other than \(Self.agentsVersion)")
            }
            do {
                self = .agents(try AgentBoardMessage(parsingBody: Array(bytes[2...])))
            } catch {
                throw ChannelMessageError("a malformed agents message (\(error))")
            }
        case .session:
            do {
                self = .session(try SessionMessage(parsing: bytes))
            } catch {
                throw ChannelMessageError("a malformed session message (\(error))")
            }
        case .invalid:
            guard let first = bytes.first else { throw ChannelMessageError("an empty message") }
            throw ChannelMessageError(
                "a message starting with byte \(Self.hex(first)) (a control message starts with {, a session message with 0x01 to 0x1F)"
            )
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x\(digits[Int(byte >> 4)])\(digits[Int(byte & 0x0F)])"
    }
}

/// A channel message that breaks the rule or does not parse: the peer is broken or hostile, and
/// the channel ends. `description` names what was sent ("an empty message", "a malformed control
/// message (…)"), to follow "sent".
public struct ChannelMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
