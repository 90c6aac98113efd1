import RelayProtocol
import RelayServer
import RelayStorage
import Testing

/// Splicing decisions after admission: the target, drops, the frame rate and the daily quota.
@Suite struct FrameAndQuotaTests {
    static let peerGone = RelayClose(code: 1001, reason: "peer gone")

    @Test func framesGoToTheOtherSlotAndAreDroppedWithoutOne() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        #expect(h.binary(100, from: mac) == nil)
        #expect(h.isLive(mac), "a frame with no peer is dropped, not punished")
        let phone = try h.joinPhone(room)
        #expect(h.binary(100, from: mac) == phone.id)
        #expect(h.binary(0, from: phone.id) == mac)
        // Another room's sockets are never a target.
        let otherMac = try h.parkMac(makeRoom())
        #expect(h.binary(1, from: otherMac) == nil)
    }

    /// A fragmented message goes where its first frame went: a peer that arrives (or replaces the
    /// old one) half-way through never gets a continuation without its start.
    @Test func continuationFramesFollowTheirMessage() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        #expect(h.binary(10, from: mac) == nil, "no peer at the message's start")
        let phone = try h.joinPhone(room)
        #expect(h.continuation(10, from: mac) == nil, "the rest of that message is dropped too")
        #expect(h.binary(10, from: mac) == phone.id)
        #expect(h.continuation(10, from: mac) == phone.id)
        let newPhone = try h.joinPhone(room)
        #expect(h.closes[phone.id] == RelayClose(code: 1000, reason: "displaced"))
        #expect(h.continuation(10, from: mac) == nil, "the new phone missed the message's start")
        #expect(h.binary(10, from: mac) == newPhone.id)
    }

    @Test func fiveHundredMessagesPerSecondThenTheSenderIsClosedAndItsPeerToo() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        let phone = try h.joinPhone(room)
        for index in 0..<500 {
            let target = h.binary(10, from: index.isMultiple(of: 2) ? mac : phone.id)
            #expect(target == (index.isMultiple(of: 2) ? phone.id : mac), "frame \(index)")
            // Continuation frames are parts of a message, not messages: they do not count.
            #expect(h.continuation(1, from: index.isMultiple(of: 2) ? mac : phone.id) != nil)
        }
        #expect(h.binary(10, from: phone.id) == nil)
        #expect(h.closes[phone.id] == RelayClose(code: 1008, reason: "frame rate exceeded"))
        #expect(h.closes[mac] == Self.peerGone, "the side left behind is closed, as upstream")
    }

    /// Messages with no peer to take them count toward the rate and the quota alike.
    @Test func messagesWithNoPeerStillCount() throws {
        let h = CoreHarness { $0.bytesPerDay = 1000 }
        let mac = try h.parkMac(makeRoom())
        for _ in 0..<500 { #expect(h.binary(1, from: mac) == nil) }
        #expect(h.isLive(mac))
        #expect(h.binary(1, from: mac) == nil)
        #expect(h.closes[mac] == RelayClose(code: 1008, reason: "frame rate exceeded"))
        let other = try h.parkMac(makeRoom())
        #expect(h.binary(1000, from: other) == nil)
        #expect(h.isLive(other))
        #expect(h.binary(1, from: other) == nil)
        #expect(h.closes[other] == Self.quotaExceeded)
    }

    /// The rate window begins at a room's first message and lasts a second, as upstream's.
    @Test func theRateWindowStartsAtTheFirstMessage() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        let phone = try h.joinPhone(room)
        h.clock.advance(milliseconds: 700)
        for _ in 0..<500 { #expect(h.binary(1, from: mac) == phone.id) }
        h.clock.advance(milliseconds: 999)  // still the window that began 999 ms ago
        #expect(h.binary(1, from: mac) == nil)
        #expect(h.closes[mac] == RelayClose(code: 1008, reason: "frame rate exceeded"))

        let room2 = makeRoom()
        let mac2 = try h.parkMac(room2)
        let phone2 = try h.joinPhone(room2)
        for _ in 0..<500 { #expect(h.binary(1, from: mac2) == phone2.id) }
        h.clock.advance(milliseconds: 1000)
        for _ in 0..<500 { #expect(h.binary(1, from: mac2) == phone2.id) }
        #expect(h.isLive(mac2))
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
        #expect(h.binary(1, from: overBy == .computer ? mac : phone) == nil)
        #expect(h.closes[mac] == Self.quotaExceeded)
        #expect(h.closes[phone] == Self.quotaExceeded)
        // 24 hours after the window began, a fresh one starts.
        h.advancePastQuotaWindow()
        let again = try Self.admitBoth(h, room, key: key, establish: false)
        #expect(h.binary(1000, from: again.mac) == again.phone)
    }

    /// The quota is a rolling 24 hours from the window's first byte (upstream's), not a calendar
    /// day: bytes an hour before midnight still count an hour after it.
    @Test func theQuotaWindowRollsFromItsFirstByte() throws {
        let h = CoreHarness { $0.bytesPerDay = 1000 }
        let room = makeRoom()
        let (mac, phone) = try Self.admitBoth(h, room, key: nil)
        let now = h.clock.unixSeconds
        h.clock.advance(seconds: (now / 86_400 + 1) * 86_400 - now - 3600)  // 23:00 UTC
        #expect(h.binary(900, from: mac) == phone)
        h.clock.advance(seconds: 7200)  // 01:00 UTC, the next calendar day
        #expect(h.binary(100, from: mac) == phone)
        #expect(h.binary(1, from: mac) == nil)
        #expect(h.closes[mac] == Self.quotaExceeded)
    }

    /// Upstream admits into a room over its quota and closes the room at its first frame; so
    /// does this relay, until the window ends.
    @Test func aRoomOverItsQuotaIsAdmittedAndClosedAtItsFirstFrame() throws {
        let h = CoreHarness { $0.bytesPerDay = 1000 }
        let room = makeRoom()
        let key = try makeKey()
        let (mac, phone) = try Self.admitBoth(h, room, key: key)
        #expect(h.binary(1001, from: phone) == nil)
        #expect(h.closes[mac] == Self.quotaExceeded && h.closes[phone] == Self.quotaExceeded)
        h.clock.advance(seconds: 3600)
        let macAgain = try h.signedJoin(room, .computer, key: key)
        #expect(macAgain.result == .admitted(registrationToken: nil))
        #expect(h.binary(1, from: macAgain.id) == nil)
        #expect(h.closes[macAgain.id] == Self.quotaExceeded)
        h.advancePastQuotaWindow()
        let fresh = try h.signedJoin(room, .computer, key: key)
        #expect(h.binary(1, from: fresh.id) == nil)
        #expect(h.isLive(fresh.id), "a new window: the frame is dropped for want of a peer, not refused")
    }

    /// A pairing room has no stored record, yet once its quota closed its sockets a re-park
    /// within the window is closed at its first frame; after the window it relays again.
    @Test
    func aPairingRoomOverItsQuotaStaysOverItForTheWindow() throws {
        let h = CoreHarness { $0.bytesPerDay = 1000 }
        let room = makeRoom()
        let (mac, _) = try Self.admitBoth(h, room, key: nil)
        #expect(h.binary(1001, from: mac) == nil)
        h.clock.advance(seconds: 60)
        let again = try h.parkMac(room)
        #expect(h.binary(1, from: again) == nil)
        #expect(h.closes[again] == Self.quotaExceeded)
        h.advancePastQuotaWindow()
        let fresh = try h.parkMac(room)
        #expect(h.binary(1, from: fresh) == nil)
        #expect(h.isLive(fresh))
    }

    /// A Mac and a phone admitted to `room`: a pairing room without `key`; with it, signed joins
    /// to the room (made established with `key` first when `establish`).
    static func admitBoth(_ h: CoreHarness, _ room: String, key: RelayJoinKey?, establish: Bool = true) throws
        -> (mac: ConnectionID, phone: ConnectionID)
    {
        guard let key else { return (try h.parkMac(room), try h.joinPhone(room).id) }
        if establish { _ = try h.establish(room, key: key) }
        return (try h.signedJoin(room, .computer, key: key).id, try h.signedJoin(room, .device, key: key).id)
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
        let mac = try h.signedJoin(room, .computer, key: key).id
        let phone = try h.signedJoin(room, .device, key: key).id
        #expect(h.binary(100, from: mac) == phone)
        #expect(h.binary(1, from: mac) == nil)
        #expect(h.closes[mac] == Self.quotaExceeded && h.closes[phone] == Self.quotaExceeded)
    }
}
