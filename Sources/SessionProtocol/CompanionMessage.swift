import Foundation
import HerdrBase
import PeerGate
import RelayProtocol

/// The control messages inside the end-to-end channel (docs/companion.md, "Inside the
/// channel"). Each is one channel message starting with `{` (`ChannelMessage` tells the kinds
/// apart): a JSON object with exactly one key naming it, at most `maximumLength` bytes.
public enum CompanionMessage: Hashable, Sendable {
    /// Computer → device, the first message after a fresh pairing's handshake: the person typed the
    /// device's code on the computer (`accepted`), or did not (`rejected`).
    case pairing(accepted: Bool)
    /// Device → computer, first on every connection: who it is and the room secret (resent every
    /// time, so a pairing that dropped half-way heals itself).
    case status(DeviceStatus)
    /// Computer → device: the status is stored; the device may now register the room.
    case statusAcknowledged
    /// Device → computer: the relay accepted the room's verifier; the room is established.
    case registered
    /// Computer → device, after the status on every connection: where its home door listens now
    /// (empty: it has none), so a changed lease heals the next time any road is up.
    case home([HomeAddress])
    /// Either side, at any time after the handshake: asks for a `pong` with the same number at
    /// once, so each side can tell a live path from a silent one (docs/companion.md, "Liveness").
    case ping(UInt32)
    /// The answer to `ping`.
    case pong(UInt32)
    /// Computer → device, right before the `started` that answers a `resume`: how many input
    /// bytes of the session the computer has received, so the device sends the rest again.
    case inputReceived(stream: UInt32, bytes: UInt64)
    /// Device → computer, at any time in a session: the output window it wants from now on (in
    /// the session protocol's window range), sized to the path.
    case window(stream: UInt32, bytes: Int)
    /// Device → computer, at any time after the ack: start (`watch`) or stop sending the agents
    /// board (`ChannelMessage.agents`): a whole board at once, then its changes. A computer that
    /// does not know the key ignores it, so the device tells an older computer by its silence.
    case agents(watch: Bool)
    /// Computer → device, right before every `statusAcknowledged`: what it serves beyond
    /// sessions of bytes, each with its version (`"screen": 1`: screen sessions). A device
    /// opens a screen session only on a computer that said so.
    case serves([String: Int])
    /// A control message of a later version, by its key: ignored.
    case unknown(String)

    /// The most keys of a `serves`.
    public static let maximumServed = 16

    /// A name `serves` can hold: 1–32 ASCII letters, digits, `-` and `_`.
    static func isServedName(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// What this side's herdr-host serves.
    public static let servedByThisVersion = CompanionMessage.serves([screenSessions: 1])
    /// The `serves` key of screen sessions (docs/companion.md, "Screen sessions").
    public static let screenSessions = "screen"

    /// The longest control message.
    public static let maximumLength = 4096

    /// What a device says about itself on connecting.
    public struct DeviceStatus: Hashable, Sendable {
        /// The device's display name, printable, at most 64 characters.
        public var name: String
        /// The 32 random bytes the device minted at pairing; both sides derive the join key from it.
        public var roomSecret: [UInt8]
        /// Whether the device has registered the room's verifier with the relay.
        public var registered: Bool

        public init(name: String, roomSecret: [UInt8], registered: Bool) {
            self.name = name
            self.roomSecret = roomSecret
            self.registered = registered
        }
    }

    public var bytes: [UInt8] {
        let text: String
        switch self {
        case .pairing(let accepted): text = "{\"pairing\":\"\(accepted ? "accepted" : "rejected")\"}"
        case .status(let status):
            text =
                "{\"status\":{\"v\":1,\"name\":\(RelayJSON.quoted(status.name)),\"roomSecret\":\"\(Data(status.roomSecret).base64EncodedString())\",\"registered\":\(status.registered)}}"
        case .statusAcknowledged: text = "{\"ack\":\"status\"}"
        case .registered: text = "{\"registered\":true}"
        case .home(let addresses):
            text = "{\"home\":[\(addresses.map { "\"\($0)\"" }.joined(separator: ","))]}"
        case .ping(let number): text = "{\"ping\":\(number)}"
        case .pong(let number): text = "{\"pong\":\(number)}"
        case .inputReceived(let stream, let bytes):
            text = "{\"inputReceived\":{\"stream\":\(stream),\"bytes\":\(bytes)}}"
        case .window(let stream, let bytes): text = "{\"window\":{\"stream\":\(stream),\"bytes\":\(bytes)}}"
        case .agents(let watch): text = "{\"agents\":{\"v\":1,\"watch\":\(watch)}}"
        case .serves(let things):
            let fields = things.sorted { $0.key < $1.key }.map { "\(RelayJSON.quoted($0.key)):\($0.value)" }
            text = "{\"serves\":{\(fields.joined(separator: ","))}}"
        case .unknown(let key): text = "{\(RelayJSON.quoted(key)):null}"
        }
        return Array(text.utf8)
    }

    /// Parses a control message; throws, naming the problem, for anything malformed.
    public init(parsing bytes: [UInt8]) throws(CompanionMessageError) {
        guard bytes.count <= Self.maximumLength else {
            throw CompanionMessageError("a control message of \(bytes.count) bytes (at most \(Self.maximumLength))")
        }
        guard case .object(let object) = RelayJSON.value(bytes), object.count == 1, let (key, value) = object.first
        else { throw CompanionMessageError("a control message is not a JSON object with one key") }
        switch key {
        case "pairing":
            switch value as? String {
            case "accepted": self = .pairing(accepted: true)
            case "rejected": self = .pairing(accepted: false)
            default: throw CompanionMessageError("pairing is neither accepted nor rejected")
            }
        case "status":
            guard let fields = value as? [String: Any], RelayJSON.integer(fields["v"]) == 1,
                let name = fields["name"] as? String, !name.isEmpty,
                name == PairingCodeRules.printableText(name, limit: PairingCodeRules.maximumNameLength),
                let secret = RelayJSON.bytes(fields["roomSecret"]), secret.count == RelayJoinKey.roomSecretSize,
                let registered = RelayJSON.boolean(fields["registered"])
            else {
                throw CompanionMessageError(
                    "a status is not {v: 1, name: 1-64 printable characters, roomSecret: 32 bytes, registered}")
            }
            self = .status(DeviceStatus(name: name, roomSecret: secret, registered: registered))
        case "ack":
            guard value as? String == "status" else { throw CompanionMessageError("an ack of something unknown") }
            self = .statusAcknowledged
        case "registered":
            guard RelayJSON.boolean(value) == true else { throw CompanionMessageError("registered is not true") }
            self = .registered
        case "home":
            guard let list = value as? [Any], list.count <= HomeAddress.maximumCount else {
                throw CompanionMessageError("home is not a list of at most \(HomeAddress.maximumCount) addresses")
            }
            var addresses: [HomeAddress] = []
            for entry in list {
                guard let text = entry as? String, let address = try? HomeAddress(parsing: text),
                    !addresses.contains(address)
                else { throw CompanionMessageError("home holds something other than distinct home addresses") }
                addresses.append(address)
            }
            self = .home(addresses)
        case "ping", "pong":
            guard let number = RelayJSON.integer(value), let id = UInt32(exactly: number) else {
                throw CompanionMessageError("\(key) is not a whole number of 0 to 4294967295")
            }
            self = key == "ping" ? .ping(id) : .pong(id)
        case "inputReceived":
            guard let fields = value as? [String: Any], let stream = RelayJSON.integer(fields["stream"]),
                let stream = UInt32(exactly: stream), let bytes = RelayJSON.integer(fields["bytes"]),
                let bytes = UInt64(exactly: bytes)
            else { throw CompanionMessageError("inputReceived is not {stream: 0 to 4294967295, bytes: 0 or more}") }
            self = .inputReceived(stream: stream, bytes: bytes)
        case "window":
            guard let fields = value as? [String: Any], let stream = RelayJSON.integer(fields["stream"]),
                let stream = UInt32(exactly: stream), let bytes = RelayJSON.integer(fields["bytes"]),
                SessionMessage.windowRange.contains(bytes)
            else {
                throw CompanionMessageError(
                    "window is not {stream: 0 to 4294967295, bytes: \(SessionMessage.windowRange.lowerBound) to \(SessionMessage.windowRange.upperBound)}"
                )
            }
            self = .window(stream: stream, bytes: bytes)
        case "agents":
            guard let fields = value as? [String: Any], let version = RelayJSON.integer(fields["v"]) else {
                throw CompanionMessageError("agents is not {v, watch}")
            }
            // A later version of the family: this side does not speak it, as if the key were unknown.
            guard version == 1 else {
                self = .unknown(key)
                return
            }
            guard let watch = RelayJSON.boolean(fields["watch"]) else {
                throw CompanionMessageError("agents is not {v: 1, watch: true or false}")
            }
            self = .agents(watch: watch)
        case "serves":
            guard let fields = value as? [String: Any], fields.count <= Self.maximumServed else {
                throw CompanionMessageError("serves is not an object of at most \(Self.maximumServed) keys")
            }
            // A name or a value this side cannot read is a later kind of offer: passed over, as
            // an unknown key is.
            var served: [String: Int] = [:]
            for (name, value) in fields where Self.isServedName(name) {
                if let version = RelayJSON.integer(value), (0...Int(Int32.max)).contains(version) {
                    served[name] = version
                }
            }
            self = .serves(served)
        default:
            self = .unknown(key)
        }
    }
}

/// A control message that does not parse: the peer is broken or hostile; the channel ends.
public struct CompanionMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
