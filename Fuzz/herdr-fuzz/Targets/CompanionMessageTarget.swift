import PeerGate
import RelayProtocol
import SessionProtocol

extension FuzzTargets {
    /// The control messages inside the companion channel (docs/companion-code.md, "Inside the
    /// channel"): any bytes parse or are refused with a reason; a parsed message is at most 4096
    /// bytes and starts with `{`, its encoding is a control message within the limit that parses
    /// back to the same message, and the fields keep their bounds (a status's name printable and
    /// 1-64 characters, a 32-byte room secret; at most `HomeAddress.maximumCount` distinct home
    /// addresses; an unknown key never one this side knows).
    static let companionMessage = FuzzTarget("companion-message", "Companion control messages (JSON)") { data in
        let message: CompanionMessage
        do throws(CompanionMessageError) {
            message = try CompanionMessage(parsing: data)
        } catch {
            FuzzCheck.expect(!error.description.isEmpty, "a refusal without a reason")
            return
        }
        FuzzCheck.expect(data.count <= CompanionMessage.maximumLength, "a message over the limit parsed")
        let encoded = message.bytes
        FuzzCheck.expect(ChannelMessage.Kind(firstByteOf: encoded) == .control, "the encoding is not a control message")
        FuzzCheck.expect(encoded.count <= CompanionMessage.maximumLength, "the encoding is over the limit")
        FuzzCheck.expect(
            (try? CompanionMessage(parsing: encoded)) == message,
            "the encoding does not parse back: \(String(decoding: encoded, as: UTF8.self))")
        switch message {
        case .status(let status):
            FuzzCheck.expect(status.roomSecret.count == RelayJoinKey.roomSecretSize, "a room secret of the wrong size")
            FuzzCheck.expect(!status.name.isEmpty && status.name.count <= 64, "a name out of bounds")
        case .home(let addresses):
            FuzzCheck.expect(
                addresses.count <= HomeAddress.maximumCount && Set(addresses).count == addresses.count,
                "home out of bounds")
        case .unknown(let key):
            FuzzCheck.expect(
                ![
                    "pairing", "status", "ack", "registered", "home", "ping", "pong", "inputReceived", "window",
                    "serves",
                ].contains(key),
                "a known key read as unknown")
        case .serves(let served):
            FuzzCheck.expect(served.count <= CompanionMessage.maximumServed, "serves out of bounds")
            FuzzCheck.expect(served.values.allSatisfy { (0...Int(Int32.max)).contains($0) }, "a version out of bounds")
        case .pairing, .statusAcknowledged, .registered, .ping, .pong, .inputReceived, .window, .agents:
            break
        }
    }
}
