/// One line of an ssh_config file split as OpenSSH 9.2 splits it (readconf.c
/// `process_config_line_depth`, misc.c `strdelim` and `argv_split`), byte for byte:
///
/// - the line ends at a NUL (ssh handles C strings) and loses trailing spaces, tabs, CR, LF and FF;
/// - the keyword ends at whitespace or one `=` (`Port 22`, `Port=22`, `Port = 22`), may be
///   double-quoted, and is case-insensitive; a line whose keyword is empty or starts with `#` is
///   nothing;
/// - the values are split at spaces and tabs; `"` and `'` quote (also inside a word: `a"b c"`
///   is `ab c`); `\` escapes a quote, a backslash, or a space outside quotes; a `#` at the start
///   of a value ends the line, so `HostName h # note` is `h` but `HostName h#1` is `h#1`.
///
/// The raw text after the keyword is kept too: ssh takes ProxyCommand, ProxyJump and the other
/// command keywords from it unsplit, comments and quotes included.
struct SSHConfigLine: Equatable, Sendable {
    /// The keyword, lowercased (ASCII, as ssh's `lowercase`).
    let keyword: [UInt8]
    /// The values, unquoted and unescaped.
    let arguments: [[UInt8]]
    /// The text after the keyword and the whitespace after it, as written.
    let remainder: [UInt8]

    /// Why a line is refused.
    enum Failure: Error, Equatable {
        /// A keyword with nothing after it (ssh: `no argument after keyword`).
        case missingArgument(keyword: [UInt8])
        /// A value whose quote is never closed (ssh: `invalid quotes`).
        case unterminatedQuote(keyword: [UInt8])
    }

    /// The directive on `bytes` (one line, without its newline), or nil for a blank or comment line.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(Failure) -> SSHConfigLine? {
        // Shortcut for blank and comment lines, which the full split also finds to be nothing:
        // the keyword would be empty or start with `#`.
        guard let first = bytes.first(where: { !isWhitespace($0) }), first != 0, first != UInt8(ascii: "#") else {
            return nil
        }
        var line = Array(bytes.prefix { $0 != 0 })
        // ssh strips from the end down to, not including, the first byte.
        var end = line.count
        while end > 1, isTrailingSpace(line[end - 1]) { end -= 1 }
        line.removeSubrange(end...)
        guard !line.isEmpty else { return nil }

        var position: Int? = 0
        guard var keyword = nextToken(line, &position) else { return nil }
        // A line starting with whitespace or `=` yields an empty first token; ssh tries once more.
        if keyword.isEmpty {
            guard let second = nextToken(line, &position) else { return nil }
            keyword = second
        }
        guard let first = keyword.first, first != UInt8(ascii: "\n"), first != UInt8(ascii: "#") else { return nil }
        keyword = keyword.map(asciiLowercased)

        guard var start = position else { throw .missingArgument(keyword: keyword) }
        while start < line.count, isWhitespace(line[start]) { start += 1 }
        guard start < line.count else { throw .missingArgument(keyword: keyword) }
        let remainder = Array(line[start...])
        guard let arguments = splitArguments(remainder) else { throw .unterminatedQuote(keyword: keyword) }
        return SSHConfigLine(keyword: keyword, arguments: arguments, remainder: remainder)
    }

    /// `remainder` without the whitespace and `=` ssh skips before a command's text.
    var commandText: [UInt8] { Array(remainder.drop { Self.isWhitespace($0) || $0 == UInt8(ascii: "=") }) }

    /// misc.c `strdelim`: the next token from `position`, which moves past the token and its
    /// separator (nil once the line is used up). Nil when a quote is not closed.
    private static func nextToken(_ line: [UInt8], _ position: inout Int?) -> [UInt8]? {
        guard let start = position else { return nil }
        guard
            let separator = line[start...].firstIndex(where: {
                isWhitespace($0) || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=")
            })
        else {
            position = nil
            return Array(line[start...])
        }
        if line[separator] == UInt8(ascii: "\"") {
            // The quote is removed and the token runs on to the closing quote.
            guard let close = line[(separator + 1)...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            position = skipWhitespace(line, from: close + 1)
            return Array(line[start..<separator] + line[(separator + 1)..<close])
        }
        var next = skipWhitespace(line, from: separator + 1)
        // One `=` may stand between keyword and value, with or without whitespace around it.
        if line[separator] != UInt8(ascii: "="), next < line.count, line[next] == UInt8(ascii: "=") {
            next = skipWhitespace(line, from: next + 1)
        }
        position = next
        return Array(line[start..<separator])
    }

    /// misc.c `argv_split` with `terminate_on_comment`; nil when a quote is not closed.
    private static func splitArguments(_ text: [UInt8]) -> [[UInt8]]? {
        let space = UInt8(ascii: " ")
        let tab = UInt8(ascii: "\t")
        let backslash = UInt8(ascii: "\\")
        var arguments: [[UInt8]] = []
        var index = 0
        while index < text.count {
            if text[index] == space || text[index] == tab {
                index += 1
                continue
            }
            if text[index] == UInt8(ascii: "#") { break }
            var argument: [UInt8] = []
            var quote: UInt8 = 0
            while index < text.count {
                let byte = text[index]
                if byte == backslash {
                    let escaped = index + 1 < text.count ? text[index + 1] : 0
                    if escaped == UInt8(ascii: "'") || escaped == UInt8(ascii: "\"") || escaped == backslash
                        || (quote == 0 && escaped == space)
                    {
                        index += 1
                        argument.append(escaped)
                    } else {
                        argument.append(byte)
                    }
                } else if quote == 0 && (byte == space || byte == tab) {
                    break
                } else if quote == 0 && (byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")) {
                    quote = byte
                } else if quote != 0 && byte == quote {
                    quote = 0
                } else {
                    argument.append(byte)
                }
                index += 1
            }
            arguments.append(argument)
            if index >= text.count {
                if quote != 0 { return nil }
                break
            }
            index += 1
        }
        return arguments
    }

    private static func skipWhitespace(_ line: [UInt8], from index: Int) -> Int {
        var index = index
        while index < line.count, isWhitespace(line[index]) { index += 1 }
        return index
    }

    /// readconf.c's WHITESPACE: space, tab, CR, LF.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    private static func isTrailingSpace(_ byte: UInt8) -> Bool { isWhitespace(byte) || byte == 0x0C }
}

/// ASCII lowercase of one byte, as C's `tolower` in the locales ssh runs in.
func asciiLowercased(_ byte: UInt8) -> UInt8 {
    (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
}
