/// Splits the control channel's bytes into lines of at most `LinkCommand.maximumLineBytes`. A
/// longer line is answered once with an error and skipped to its newline, so a runaway writer
/// cannot make the emulator hold unbounded input.
public struct ControlLineBuffer: Sendable {
    public enum Line: Equatable, Sendable {
        case text(String)
        case tooLong
    }

    private var pending: [UInt8] = []
    private var discarding = false

    public init() {}

    /// The complete lines in `bytes` (after what came before), without their newlines.
    public mutating func append(_ bytes: some Sequence<UInt8>) -> [Line] {
        var lines: [Line] = []
        for byte in bytes {
            if byte == 10 {
                if discarding {
                    discarding = false
                } else {
                    if pending.last == 13 { pending.removeLast() }
                    lines.append(.text(String(decoding: pending, as: UTF8.self)))
                }
                pending.removeAll(keepingCapacity: true)
            } else if !discarding {
                pending.append(byte)
                if pending.count > LinkCommand.maximumLineBytes + 1 {
                    // One byte of slack for a carriage return before the newline.
                    lines.append(.tooLong)
                    discarding = true
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        return lines
    }
}
