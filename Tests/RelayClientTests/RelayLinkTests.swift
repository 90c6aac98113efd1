import Foundation
import HerdrCrypto
import Plumbing
import RelayClient
import RelayProtocol
import TestSupport
import Testing

@Suite("RelayLink keeps a room connection alive", .serialized)
struct RelayLinkTests {
    static func fastOptions() -> RelayLink.Options {
        var options = RelayLink.Options()
        options.connection = quickOptions()
        options.backoff = RelayBackoff(initialDelay: 0.05, maximumDelay: 0.4)
        return options
    }

    /// Events until the next admitted connection (or a failure if the link stops or stalls).
    static func nextAdmitted(_ link: RelayLink, timeout: Double = 10) throws -> RelayConnection {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            switch link.nextEvent(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            case .admitted(let connection)?: return connection
            case .stopped(let reason)?: throw FixtureError("the link stopped: \(reason)")
            case .connecting?, .waiting?, nil: continue
            }
        }
        throw FixtureError("no admission within \(timeout) s")
    }

    static func nextStop(_ link: RelayLink, timeout: Double = 10) throws -> RelayLink.StopReason {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if case .stopped(let reason)? = link.nextEvent(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
                return reason
            }
        }
        throw FixtureError("the link did not stop within \(timeout) s")
    }

    @Test("reconnects after the relay restarts on the same port (the room survives in SQLite), stops on room deleted")
    func restartThenDelete() throws {
        let directory = try TemporaryDirectory(prefix: "relay-link-")
        let database = directory.file("relay.sqlite").path
        var relay = try TestRelay(databasePath: database)
        let port = relay.port
        let established = try EstablishedRoom(relay)
        established.close()

        let credential = RelayCredential.joinKey(established.joinKey)
        let macLink = RelayLink(
            endpoint: relay.endpoint, room: established.room, role: .computer, credential: credential,
            options: Self.fastOptions())
        let phoneLink = RelayLink(
            endpoint: relay.endpoint, room: established.room, role: .device, credential: credential,
            options: Self.fastOptions())
        defer {
            macLink.stop()
            phoneLink.stop()
            #expect(macLink.waitUntilStopped(timeout: 5))
            #expect(phoneLink.waitUntilStopped(timeout: 5))
        }
        var mac = try Self.nextAdmitted(macLink)
        var phone = try Self.nextAdmitted(phoneLink)
        #expect(macLink.state == .admitted)
        try mac.send([1, 2, 3])
        #expect(try expectMessage(phone) == [1, 2, 3])

        relay.shutdown()
        #expect(try expectEnd(mac) == .closedByRelay(.serverShuttingDown))
        // The links wait and retry against a closed port for a moment.
        Thread.sleep(forTimeInterval: 0.3)
        relay = try TestRelay(port: port, databasePath: database)
        mac = try Self.nextAdmitted(macLink)
        phone = try Self.nextAdmitted(phoneLink)
        // Both may have been admitted before the other; the later one's frames reach the earlier.
        try phone.send([4, 5, 6])
        #expect(try expectMessage(mac) == [4, 5, 6])
        try mac.send([7])
        #expect(try expectMessage(phone) == [7])

        try relay.http.deleteRoom(room: established.room, joinKey: established.joinKey)
        #expect(try Self.nextStop(macLink) == .roomDeleted)
        #expect(try Self.nextStop(phoneLink) == .roomDeleted)
        #expect(macLink.state == .stopped(.roomDeleted))
    }

    /// A connection that had been up its steady time and dropped is tried again at once (the
    /// computer parks again on the node a balancer picks now); one that dropped sooner waits.
    @Test("a drop after the steady time is retried at once, a drop before it after the backoff")
    func dropAfterSteadyTimeRetriesAtOnce() throws {
        let relay = try TestRelay()
        for (steady, waits) in [(0.0, false), (3600.0, true)] {
            var options = Self.fastOptions()
            options.steadyConnection = steady
            let link = RelayLink(
                endpoint: relay.endpoint, room: randomRoom(), role: .computer, credential: .none, options: options)
            defer {
                link.stop()
                link.waitUntilStopped(timeout: 5)
            }
            let first = try Self.nextAdmitted(link)
            first.close()  // the socket dies under the link
            var events: [String] = []
            let deadline = Date().addingTimeInterval(10)
            readEvents: while Date() < deadline, let event = link.nextEvent(timeout: 5) {
                switch event {
                case .admitted: break readEvents
                case .waiting: events.append("waiting")
                case .connecting: events.append("connecting")
                case .stopped(let reason): Issue.record("the link stopped: \(reason)")
                }
            }
            #expect(events.contains("waiting") == waits, "steady time \(steady) s: \(events)")
            #expect(events.contains("connecting"), "it connected again: \(events)")
        }
    }

    @Test("a join key the room does not know stops the link: remote access needs re-pairing")
    func badSignatureStops() throws {
        let relay = try TestRelay()
        let established = try EstablishedRoom(relay)
        defer { established.close() }
        let stranger = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        let link = RelayLink(
            endpoint: relay.endpoint, room: established.room, role: .device, credential: .joinKey(stranger),
            options: Self.fastOptions())
        let reason = try Self.nextStop(link)
        #expect(reason == .needsRepairing("bad signature"))
        #expect(reason.description.contains("re-pairing"))
    }

    @Test("a phone waits for its Mac (mac offline is retried) and is admitted once the Mac parks")
    func waitsForMac() throws {
        let relay = try TestRelay()
        let room = randomRoom()
        let link = RelayLink(
            endpoint: relay.endpoint, room: room, role: .device, credential: .none, options: Self.fastOptions())
        defer {
            link.stop()
            link.waitUntilStopped(timeout: 5)
        }
        var sawWaiting = false
        let deadline = Date().addingTimeInterval(5)
        while !sawWaiting && Date() < deadline {
            if case .waiting(_, let reason)? = link.nextEvent(timeout: 1) {
                sawWaiting = true
                #expect(reason == "mac offline")
            }
        }
        #expect(sawWaiting)
        let mac = try connect(relay, room: room, role: .computer)
        defer { mac.close() }
        let phone = try Self.nextAdmitted(link)
        #expect(phone.registrationToken?.count == 24)
    }

    /// A handler gets the link's events and each connection's frames straight from their own
    /// threads, in order: a connection's end before whatever the link says after it.
    @Test("deliver(to:) hands over the link's events and its connections' frames, each end before what follows")
    func deliversToAHandler() throws {
        let relay = try TestRelay()
        let room = randomRoom()
        var options = Self.fastOptions()
        options.steadyConnection = 0  // a drop is retried at once: the next admission follows the end closely
        let mac = RelayLink(endpoint: relay.endpoint, room: room, role: .computer, credential: .none, options: options)
        let events = EventQueue<RelayLink.RoomEvent>()
        mac.deliver { events.push($0) }
        let phoneLink = RelayLink(
            endpoint: relay.endpoint, room: room, role: .device, credential: .none, options: Self.fastOptions())
        defer {
            mac.stop()
            phoneLink.stop()
            #expect(mac.waitUntilStopped(timeout: 5))
            #expect(phoneLink.waitUntilStopped(timeout: 5))
        }
        guard case .admitted(let first)? = events.next(timeout: 10) else {
            Issue.record("the first event is the admission")
            return
        }
        let phone = try Self.nextAdmitted(phoneLink)
        try phone.send([1])
        try phone.send([2])
        for expected: [UInt8] in [[1], [2]] {
            guard case .frame(let frame)? = events.next(timeout: 5) else {
                Issue.record("the phone's frames follow the admission")
                return
            }
            #expect(frame == expected)
        }
        #expect(mac.nextEvent(timeout: 0) == nil, "the queue gets nothing once a handler takes the events")

        first.close()  // the socket dies under the link
        guard case .connectionEnded(.closedLocally)? = events.next(timeout: 5) else {
            Issue.record("the connection's end comes first")
            return
        }
        guard case .admitted? = events.next(timeout: 10) else {
            Issue.record("then the link's next admission")
            return
        }
        mac.stop()
        guard case .connectionEnded? = events.next(timeout: 5), case .stopped(.stopped)? = events.next(timeout: 5)
        else {
            Issue.record("a stop ends the connection, then the link")
            return
        }
        #expect(events.next(timeout: 0.2) == nil, "stopped is the last event")
    }

    @Test("stop() ends a link that is waiting to retry, promptly")
    func stopWhileWaiting() throws {
        let port = try LoopbackSocket.closedPort()
        let endpoint = try RelayEndpoint(parsing: "http://127.0.0.1:\(port)")
        var options = Self.fastOptions()
        options.backoff = RelayBackoff(initialDelay: 5, maximumDelay: 5)
        let link = RelayLink(
            endpoint: endpoint, room: randomRoom(), role: .computer, credential: .none, options: options)
        let deadline = Date().addingTimeInterval(5)
        var waiting = false
        while !waiting && Date() < deadline {
            if case .waiting? = link.nextEvent(timeout: 1) { waiting = true }
        }
        #expect(waiting)
        let start = Date()
        link.stop()
        #expect(link.waitUntilStopped(timeout: 2))
        #expect(Date().timeIntervalSince(start) < 1)
        #expect(link.state == .stopped(.stopped))
    }
}
