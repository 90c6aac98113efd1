/// Carries the original relay's established rooms into a store of ours, so that no user has to
/// pair again after a move. Idempotent: a room already here with the same verifier is kept (its
/// activity and quota brought up to the newer of the two); a room already here with another
/// verifier is refused, never overwritten.
public enum OriginalRelayImport {
    /// What an import did (or, for a dry run, would do).
    public struct Report: Sendable, Hashable {
        /// Rooms written to the store.
        public var carried = 0
        /// Rooms the store already held with the same verifier.
        public var alreadyPresent = 0
        /// Rooms unused past the idle TTL.
        public var expired = 0
        /// Rooms that never registered a verifier.
        public var notEstablished = 0
        /// Rooms refused, by name, with the reason; nothing of them was written.
        public var refused: [Refusal] = []

        public init() {}
    }

    /// A room left behind, and why.
    public struct Refusal: Sendable, Hashable {
        public var room: String
        public var reason: String
    }

    /// Reads every room of `source` and writes the established, unexpired ones into `store`
    /// (unless `dryRun`). `now` and `idleLifetime` in seconds.
    public static func run(
        from source: OriginalRelayDatabase, into store: any RelayStore, now: Int64, idleLifetime: Int64,
        dryRun: Bool = false
    ) throws(RelayStoreError) -> Report {
        var report = Report()
        for room in try source.rooms() {
            switch OriginalRoomVerdict.of(room, now: now, idleLifetime: idleLifetime) {
            case .notEstablished: report.notEstablished += 1
            case .expired: report.expired += 1
            case .refused(let reason): report.refused.append(Refusal(room: room.name, reason: reason))
            case .established(let record):
                guard let existing = try store.room(named: record.name), existing.verifier != nil else {
                    if !dryRun { try store.save(record) }
                    report.carried += 1
                    continue
                }
                guard existing.verifier == record.verifier else {
                    report.refused.append(
                        Refusal(room: room.name, reason: "this relay already holds the room with another verifier"))
                    continue
                }
                var merged = existing
                merged.lastActivity = max(existing.lastActivity, record.lastActivity)
                if record.quotaWindowStart > existing.quotaWindowStart {
                    merged.quotaWindowStart = record.quotaWindowStart
                    merged.quotaBytes = record.quotaBytes
                }
                if merged != existing && !dryRun { try store.save(merged) }
                report.alreadyPresent += 1
            }
        }
        return report
    }
}
