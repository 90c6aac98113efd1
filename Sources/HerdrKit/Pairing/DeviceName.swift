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
    /// never answers INVALID because of the name. A result that is empty, or blank as the computer
    /// sees it (characters that are all whitespace, such as a space carrying a combining mark),
    /// becomes ``fallbackDeviceName``.
    public static func sanitizedDeviceName(_ raw: String) -> String {
        let kept = PairingCodeRules.printableText(raw, limit: maximumDeviceNameLength)
        return kept.contains(where: { !$0.isWhitespace }) ? kept : fallbackDeviceName
    }
}
