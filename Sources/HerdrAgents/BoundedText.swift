import HerdrBase

/// Text from a peer or from herdr, made safe to show and to carry: printable characters only
/// (control, format and private-use code points dropped, separators, tabs and line breaks made
/// spaces, trimmed), cut
/// at a character boundary to at most `maxBytes` bytes of UTF-8.
public enum BoundedText {
    public static func printable(_ raw: String, maxBytes: Int) -> String {
        let spaced = String(raw.unicodeScalars.map { "\t\n\r".unicodeScalars.contains($0) ? " " : Character($0) })
        let clean = PairingCodeRules.printableText(spaced, limit: maxBytes)
        guard clean.utf8.count > maxBytes else { return clean }
        var out = ""
        var used = 0
        for character in clean {
            let size = character.utf8.count
            guard used + size <= maxBytes else { break }
            out.append(character)
            used += size
        }
        return out
    }

    /// `raw` made printable and bounded, or nil when nothing is left of it.
    public static func optional(_ raw: String?, maxBytes: Int) -> String? {
        guard let raw else { return nil }
        let text = printable(raw, maxBytes: maxBytes)
        return text.isEmpty ? nil : text
    }
}
