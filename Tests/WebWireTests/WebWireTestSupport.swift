import WebWire

/// Bytes from a hex string; whitespace is ignored.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8.filter { $0 != 0x20 && $0 != 0x0A })
    precondition(digits.count % 2 == 0, "odd hex length")
    func nibble(_ char: UInt8) -> UInt8 {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
        default: preconditionFailure("not hex")
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
}

/// SplitMix64: a tiny deterministic generator, so fuzz and random chunking repeat exactly.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

/// Every message in `bytes`, fed at once.
func decodeAll(_ bytes: [UInt8], role: WebSocketRole, maximumMessageSize: Int = 1 << 20) throws(WebSocketProtocolError)
    -> [WebSocketMessage]
{
    var decoder = WebSocketMessageReader(role: role, maximumMessageSize: maximumMessageSize)
    decoder.append(bytes)
    var messages: [WebSocketMessage] = []
    while let message = try decoder.next() { messages.append(message) }
    return messages
}

/// The error decoding `bytes` fails with, or nil if it does not fail.
func decodeError(_ bytes: [UInt8], role: WebSocketRole, maximumMessageSize: Int = 1 << 20) -> WebSocketProtocolError? {
    do {
        _ = try decodeAll(bytes, role: role, maximumMessageSize: maximumMessageSize)
        return nil
    } catch {
        return error
    }
}

/// The byte string a peer in the other role would send: clients mask, servers do not.
func frame(
    _ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, to role: WebSocketRole,
    maskKey: UInt32 = 0xA1B2_C3D4
) -> [UInt8] {
    WebSocketFrameEncoder.frame(opcode, payload, fin: fin, maskKey: role == .server ? maskKey : nil)
}
