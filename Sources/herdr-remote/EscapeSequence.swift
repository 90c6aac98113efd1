/// ssh's escape sequences on the input stream: after a newline (or at the start), `~.` ends the
/// session, `~?` lists the escapes, `~~` sends one `~`. Anything else passes through unchanged.
/// Pure, so it is testable byte by byte.
struct EscapeSequence {
    enum Action: Equatable {
        case send([UInt8])
        case disconnect
        case showHelp
    }

    static let help =
        "Supported escape sequences (after a newline):\r\n  ~.  disconnect\r\n  ~?  this help\r\n  ~~  send a ~\r\n"

    private var atLineStart = true
    private var sawTilde = false

    /// Feeds typed bytes; returns what to do, in order.
    mutating func feed(_ bytes: [UInt8]) -> [Action] {
        var actions: [Action] = []
        var pending: [UInt8] = []
        func flush() {
            if !pending.isEmpty { actions.append(.send(pending)) }
            pending.removeAll()
        }
        for byte in bytes {
            if sawTilde {
                sawTilde = false
                switch byte {
                case UInt8(ascii: "."):
                    flush()
                    actions.append(.disconnect)
                    return actions
                case UInt8(ascii: "?"):
                    flush()
                    actions.append(.showHelp)
                    atLineStart = false
                    continue
                case UInt8(ascii: "~"):
                    pending.append(byte)
                    atLineStart = false
                    continue
                default:
                    pending.append(UInt8(ascii: "~"))
                }
            } else if atLineStart && byte == UInt8(ascii: "~") {
                sawTilde = true
                continue
            }
            pending.append(byte)
            atLineStart = byte == 0x0d || byte == 0x0a
        }
        flush()
        return actions
    }
}
