/// At most `limit` events per window of `length` milliseconds, the window starting at its first
/// event. Small and allocation-free: one per room and per client address.
struct FixedWindowCounter {
    private(set) var start: Int64 = .min
    private(set) var count = 0

    /// Counts an event at `now`; false when it is over the limit (the event is still counted, so a
    /// client hammering a closed window does not reopen it early).
    mutating func admit(at now: Int64, limit: Int, length: Int64) -> Bool {
        if start == .min || now - start >= length {
            start = now
            count = 0
        }
        count += 1
        return count <= limit
    }

    /// True when the window holds nothing that still counts at `now`.
    func isIdle(at now: Int64, length: Int64) -> Bool { start == .min || now - start >= length }
}
