/// The keystrokes a device sent in one session, counted from the session's first byte, with the
/// last `capacity` of them kept: after a resume the computer says how many it received
/// (`{"inputReceived"}`), and the device sends exactly the rest again, so a keystroke typed into a
/// path that had died unnoticed is neither lost nor doubled. Pure.
public struct DeviceInputLog: Sendable {
    /// Input kept for resending, at most: far more than the sockets on a path can hold.
    public static let capacity = 1024 * 1024

    /// Bytes sent in all (the offset after the last one).
    public private(set) var sent: UInt64 = 0
    private var kept: [UInt8] = []
    private var keptHead = 0

    public init() {}

    /// Bytes sent now.
    public mutating func record(_ bytes: [UInt8]) {
        sent += UInt64(bytes.count)
        kept += bytes
        let excess = kept.count - keptHead - Self.capacity
        if excess > 0 { keptHead += excess }
        // A copy of what is left once the forgotten part is large, so its memory goes back.
        if keptHead > 64 * 1024 && keptHead * 2 > kept.count {
            kept = Array(kept[keptHead...])
            keptHead = 0
        }
    }

    /// The computer received `received` bytes: what to send again (the counting goes back to
    /// `received`). Nil when `received` is past what was sent, or when the rest is no longer kept
    /// (then the counting is left alone and the missing keystrokes are lost, as with ssh).
    public mutating func rewind(toReceived received: UInt64) -> [UInt8]? {
        guard received <= sent else { return nil }
        let missing = Int(sent - received)
        guard missing <= kept.count - keptHead else { return nil }
        let resend = Array(kept[(kept.count - missing)...])
        kept.removeLast(missing)
        sent = received
        return resend
    }

    /// The session was opened afresh: a new count.
    public mutating func reset() { self = DeviceInputLog() }
}
