import RelayProtocol
import RelayStorage

/// One socket in the core: which room, which address, how far through admission.
final class ConnectionRecord {
    enum Phase {
        case awaitingHello
        case awaitingProof(RelayHello, nonce: [UInt8])
        case admitted(RelayRole)
    }

    let id: ConnectionID
    let room: RoomState
    let address: String
    let openedAt: Int64
    var phase = Phase.awaitingHello
    /// A ping is out and no pong has come back.
    var awaitingPong = false

    init(id: ConnectionID, room: RoomState, address: String, openedAt: Int64) {
        self.id = id
        self.room = room
        self.address = address
        self.openedAt = openedAt
    }

    var isAdmitted: Bool {
        if case .admitted = phase { return true }
        return false
    }
}

/// A room while it has sockets: its slots, pending sockets and counters. Leaves memory when its
/// last socket goes; what must outlive that is in the store.
final class RoomState {
    let name: String
    /// The stored record (nil: the relay has none, the room is in pairing mode).
    var record: RoomRecord?
    var pending: [ConnectionRecord] = []
    var mac: ConnectionRecord?
    var phone: ConnectionRecord?
    /// Phone-slot takes since the Mac last parked (pairing rooms).
    var pairingCycles = 0
    var proofs = FixedWindowCounter()
    var frameSecond: Int64 = .min
    var framesThisSecond = 0
    /// Today's spliced bytes, kept here and flushed to the store now and then.
    var quotaDay: Int64 = 0
    var quotaBytes: Int64 = 0
    var quotaDirty = false

    init(name: String, record: RoomRecord?) {
        self.name = name
        self.record = record
        if let record {
            quotaDay = record.quotaDay
            quotaBytes = record.quotaBytes
        }
    }

    var isEstablished: Bool { record?.verifier != nil }
    var isEmpty: Bool { pending.isEmpty && mac == nil && phone == nil }

    func slot(_ role: RelayRole) -> ConnectionRecord? {
        switch role {
        case .mac: mac
        case .phone: phone
        }
    }

    func setSlot(_ role: RelayRole, _ connection: ConnectionRecord?) {
        switch role {
        case .mac: mac = connection
        case .phone: phone = connection
        }
    }

    /// Every socket of the room.
    var connections: [ConnectionRecord] { pending + [mac, phone].compactMap { $0 } }

    /// Counts spliced bytes on `day`; false once the day's quota is exceeded.
    func spend(_ bytes: Int, day: Int64, limit: Int64) -> Bool {
        if quotaDay != day {
            quotaDay = day
            quotaBytes = 0
        }
        quotaBytes += Int64(bytes)
        quotaDirty = true
        return quotaBytes <= limit
    }

    func isOverQuota(day: Int64, limit: Int64) -> Bool { quotaDay == day && quotaBytes > limit }
}

/// Per client address: open sockets and request windows.
struct AddressUsage {
    var openSockets = 0
    var upgrades = FixedWindowCounter()
    var attestRequests = FixedWindowCounter()
}
