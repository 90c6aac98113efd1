/// One encoded terminal mode of a pty-req (RFC 4254 §8), such as IUTF8.
public struct TerminalMode: Sendable, Equatable {
    public let opcode: UInt8
    public let value: UInt32

    public init(opcode: UInt8, value: UInt32) {
        self.opcode = opcode
        self.value = value
    }

    public static func verase(_ character: UInt32) -> TerminalMode { TerminalMode(opcode: 3, value: character) }
    /// IUTF8 (opcode 42): the line discipline treats input as UTF-8, so erase removes whole characters.
    public static func iutf8(_ on: Bool) -> TerminalMode { TerminalMode(opcode: 42, value: on ? 1 : 0) }
    public static func inputSpeed(_ baud: UInt32) -> TerminalMode { TerminalMode(opcode: 128, value: baud) }
    public static func outputSpeed(_ baud: UInt32) -> TerminalMode { TerminalMode(opcode: 129, value: baud) }

    /// UTF-8 input handling, DEL as erase, and a nominal speed; the rest stays at the server's defaults.
    public static let defaults: [TerminalMode] = [.iutf8(true), .verase(127), .inputSpeed(38400), .outputSpeed(38400)]

    /// The wire encoding: each mode as opcode byte and big-endian uint32, then TTY_OP_END.
    public static func encode(_ modes: [TerminalMode]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(modes.count * 5 + 1)
        for mode in modes {
            out.append(mode.opcode)
            out.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: mode.value >> UInt32($0)) })
        }
        out.append(0)
        return out
    }
}
