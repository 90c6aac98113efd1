import RelayProtocol
import RelayServer
import RelayStorage
import Testing

/// Splicing decisions after admission: the target, drops, the frame rate and the daily quota.
@Suite struct FrameAndQuotaTests {
    @Test func framesGoToTheOtherSlotAndAreDroppedWithoutOne() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        #expect(h.binary(100, from: mac) == nil)
        #expect(h.isLive(mac), "a frame with no peer is dropped, not punished")
        let phone = try h.joinPhone(room)
        #expect(h.binary(100, from: mac) == phone.id)
        #expect(h.binary(0, from: phone.id) == mac)
        h.closed(phone.id)
        #expect(h.binary(100, from: mac) == nil)
        // Another room's sockets are never a target.
        let otherMac = try h.parkMac(makeRoom())
        #expect(h.binary(1, from: otherMac) == nil)
    }

    @Test func fiveHundredFramesPerSecondThenTheSenderIsClosed() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        let phone = try h.joinPhone(room)
        for index in 0..<500 {
            let target = h.binary(10, from: index.isMultiple(of: 2) ? mac : phone.id)
            #expect(target == (index.isMultiple(of: 2) ? phone.id : mac), "frame \(index)")
        }
        #expect(h.binary(10, from: phone.id) == nil)
        #expect(h.closes[phone.id] == RelayClose(code: 1008, reason: "frame rate exceeded"))
        #expect(h.isLive(mac))
    }

    @Test func aNewSecondResetsTheFrameCount() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        let phone = try h.joinPhone(room)
        h.clock.advance(milliseconds: 999)  // still the clock's first whole second
        for _ in 0..<500 { #expect(h.binary(1, from: mac) == phone.id) }
        h.clock.advance(milliseconds: 1)
        for _ in 0..<500 { #expect(h.binary(1, from: mac) == phone.id) }
        #expect(h.isLive(mac))
        #expect(h.binary(1, from: mac) == nil)
        #expect(h.closes[mac] == RelayClose(code: 1008, reason: "frame rate exceeded"))
    }

    static let quotaExceeded = RelayClose(code: 1008, reason: "daily quota exceeded")

    /// Pairing and established rooms, the frame over the quota sent by either side.
    @Test(arguments: [false, true], RelayRole.allCases)
    func dailyQuotaClosesTheRoom(established: Bool, overBy: RelayRole) throws {
        let h = CoreHarness { $0.bytesPerDay = 1000 }
        let room = makeRoom()
        let key = established ? try makeKey() : nil
        let (mac, phone) = try Self.admitBoth(h, room, key: key)
        #expect(h.binary(600, from: mac) == phone)
        #expect(h.binary(400, from: phone) == mac, "exactly the quota is allowed")
        #expect(h.binary(1, from: overBy == .mac ? mac : phone) == nil)
        #expect(h.closes[mac] == Self.quotaExceeded)
        #expect(h.closes[phone] == Self.quotaExceeded)
        // The next UTC day starts afresh.
        h.advanceToNextUTCDay()
        let again = try Self.admitBoth(h, room, key: key, establish: false)
        #expect(h.binary(1000, from: again.mac) == again.phone)
    }

    @Test func anEstablishedRoomOverItsQuotaRefusesAdmissionUntilTheNextUTCDay() throws {
        let h = CoreHarness { $0.bytesPerDay = 1000 }
        let room = makeRoom()
        let key = try makeKey()
        let (mac, phone) = try Self.admitBoth(h, room, key: key)
        #expect(h.binary(1001, from: phone) == nil)
        #expect(h.closes[mac] == Self.quotaExceeded && h.closes[phone] == Self.quotaExceeded)
        h.clock.advance(seconds: 3600)
        for role in RelayRole.allCases {
            let attempt = try h.signedJoin(room, role, key: key)
            #expect(attempt.result == nil, "no Result, only the close")
            #expect(h.closes[attempt.id] == Self.quotaExceeded, "\(role)")
        }
        h.advanceToNextUTCDay()
        #expect(try h.signedJoin(room, .mac, key: key).result == .admitted(registrationToken: nil))
    }

    /// A pairing room has no stored record, yet once its quota closed its sockets a re-park the
    /// same day is still refused; the next day it is admitted again.
    @Test
    func aPairingRoomOverItsQuotaRefusesAdmissionTheSameDay() throws {
        let h = CoreHarness { $0.bytesPerDay = 1000 }
        let room = makeRoom()
        let (mac, _) = try Self.admitBoth(h, room, key: nil)
        #expect(h.binary(1001, from: mac) == nil)
        h.clock.advance(seconds: 60)
        let attempt = h.join(room, .mac)
        #expect(h.closes[attempt.id] == Self.quotaExceeded)
        h.advanceToNextUTCDay()
        #expect(try h.parkMac(room) > 0)
    }

    /// A Mac and a phone admitted to `room`: a pairing room without `key`; with it, signed joins
    /// to the room (made established with `key` first when `establish`).
    static func admitBoth(_ h: CoreHarness, _ room: String, key: RelayJoinKey?, establish: Bool = true) throws
        -> (mac: ConnectionID, phone: ConnectionID)
    {
        guard let key else { return (try h.parkMac(room), try h.joinPhone(room).id) }
        if establish { _ = try h.establish(room, key: key) }
        return (try h.signedJoin(room, .mac, key: key).id, try h.signedJoin(room, .phone, key: key).id)
    }

    @Test func anEstablishedRoomsQuotaSurvivesARestart() throws {
        let store = MemoryRelayStore()
        let room = makeRoom()
        let key = try makeKey()
        do {
            let h = CoreHarness(store: store) { $0.bytesPerDay = 1000 }
            let (mac, phone) = try h.establish(room, key: key)
            #expect(h.binary(900, from: mac) == phone)
            h.core.shutdown()
            h.drain()
        }
        let h = CoreHarness(store: store) { $0.bytesPerDay = 1000 }
        let mac = try h.signedJoin(room, .mac, key: key).id
        let phone = try h.signedJoin(room, .phone, key: key).id
        #expect(h.binary(100, from: mac) == phone)
        #expect(h.binary(1, from: mac) == nil)
        #expect(h.closes[mac] == Self.quotaExceeded && h.closes[phone] == Self.quotaExceeded)
    }
}
