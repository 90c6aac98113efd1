/// Word wrapping for help text.
enum TextWrapper {
    /// Splits `text` into lines of at most `width` characters, breaking between words. A word longer
    /// than `width` gets a line of its own rather than being cut (paths and URLs must stay whole).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// `text` wrapped so that, placed after `indent` spaces, no line passes `width` columns.
    /// The first line carries `firstPrefix` (padded to `indent`) instead of spaces.
    static func hanging(_ text: String, firstPrefix: String, indent: Int, width: Int) -> [String] {
        let body = wrap(text, width: max(width - indent, 20))
        let pad = String(repeating: " ", count: indent)
        guard let first = body.first else { return [firstPrefix] }
        let lead = firstPrefix.paddedRight(to: indent)
        return [lead + first] + body.dropFirst().map { pad + $0 }
    }
}

extension String {
    /// The string padded with spaces on the right to `length` characters (unchanged if longer).
    func paddedRight(to length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
