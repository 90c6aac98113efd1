extension Pairing {
    /// The most code points of a device name sent to the computer (interop-facts §4).
    public static let maximumDeviceNameLength = 64
    /// Sent when nothing printable is left of the name the caller gave.
    public static let fallbackDeviceName = "herdr-remote device"

    /// The device name as it is sent: control and format characters (and surrogates, private-use and
    /// unassigned code points) dropped, every kind of space and line or paragraph separator turned
    /// into a plain space, cut to 64 code points, then trimmed of spaces at both ends.
    ///
    /// What is left is printable by the computer's rule (Python's `str.isprintable`), so the helper
    /// never answers INVALID because of the name. An empty result becomes ``fallbackDeviceName``.
    public static func sanitizedDeviceName(_ raw: String) -> String {
        let kept = printableText(raw, limit: maximumDeviceNameLength)
        return kept.isEmpty ? fallbackDeviceName : kept
    }

    /// `raw` with only printable code points (spaces made plain), at most `limit` of them, trimmed.
    /// Also used for names shown to a person, such as the computer name from a code.
    public static func printableText(_ raw: String, limit: Int) -> String {
        var scalars = String.UnicodeScalarView()
        var count = 0
        for scalar in raw.unicodeScalars {
            guard count < limit else { break }
            switch scalar.properties.generalCategory {
            case .control, .format, .surrogate, .privateUse, .unassigned:
                continue
            case .spaceSeparator, .lineSeparator, .paragraphSeparator:
                scalars.append(" ")
            default:
                scalars.append(scalar)
            }
            count += 1
        }
        var text = Substring(String(scalars))
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
