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
    /// Where the data message this socket is sending goes (the peer chosen at its first frame), so
    /// its continuation frames follow it and never reach a socket that missed its start.
    var messageTarget: ConnectionRecord?

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
    /// Data messages per second, the window starting at its first message (as upstream's).
    var messages = FixedWindowCounter()
    /// The rolling 24-hour byte quota, kept here and flushed to the store now and then.
    var quotaWindowStart: Int64 = 0
    var quotaBytes: Int64 = 0
    /// Bytes counted here and not yet added to the store's count.
    var unflushedBytes: Int64 = 0
    /// Whether this node holds the room's lease (a shared store only).
    var leased = false

    /// True when the store could not be read as the room came into memory: whether it is
    /// established is unknown, and no socket is admitted until a read succeeds.
    var recordUnknown = false

    init(name: String, record: RoomRecord?) {
        self.name = name
        adopt(record)
    }

    /// Takes the stored record (and its quota) as the room's.
    func adopt(_ record: RoomRecord?) {
        self.record = record
        recordUnknown = false
        if let record {
            quotaWindowStart = record.quotaWindowStart
            quotaBytes = record.quotaBytes
        }
    }

    var isEstablished: Bool { record?.verifier != nil }
    var isEmpty: Bool { pending.isEmpty && mac == nil && phone == nil }

    func slot(_ role: RelayRole) -> ConnectionRecord? {
        switch role {
        case .computer: mac
        case .device: phone
        }
    }

    func setSlot(_ role: RelayRole, _ connection: ConnectionRecord?) {
        switch role {
        case .computer: mac = connection
        case .device: phone = connection
        }
    }

    /// Every socket of the room.
    var connections: [ConnectionRecord] { pending + [mac, phone].compactMap { $0 } }

    /// The quota window's length, in seconds.
    static let quotaWindow: Int64 = 86_400

    /// Counts relayed bytes at `now` (Unix seconds); false once the window's quota is exceeded. A
    /// window ended 24 hours after it began: the next byte begins a fresh one.
    func spend(_ bytes: Int, now: Int64, limit: Int64) -> Bool {
        if now - quotaWindowStart >= Self.quotaWindow {
            quotaWindowStart = now
            quotaBytes = 0
        }
        quotaBytes += Int64(bytes)
        unflushedBytes += Int64(bytes)
        return quotaBytes <= limit
    }

    func isOverQuota(now: Int64, limit: Int64) -> Bool {
        now - quotaWindowStart < Self.quotaWindow && quotaBytes > limit
    }
}

/// Per client address: open sockets and request windows.
struct AddressUsage {
    var openSockets = 0
    var upgrades = FixedWindowCounter()
    var attestRequests = FixedWindowCounter()
}
