/// Text bound for a terminal that must not command it: C0 controls (ESC, BEL…), DEL and C1
/// controls removed, so a cell, a title or a notification from elsewhere shows as text.
public enum TerminalText {
    /// Whether `scalar` is a control a terminal would act on.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `text` without its controls (itself when it has none).
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.filter { !isControl($0) }))
    }
}
