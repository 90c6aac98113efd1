import NetworkPath
import SessionProtocol
import Testing

/// `PathLiveness` with the time passed in: when it pings, what it learns from pongs, and when a
/// silent path becomes suspect.
@Suite struct PathLivenessTests {
    @Test func anIdlePathIsPingedAfterFiveSilentSecondsAndSuspectASecondLater() {
        var path = PathLiveness(now: 100)
        #expect(path.tick(now: 104.9) == nil)
        #expect(path.nextDeadline() == 105)
        #expect(path.tick(now: 105) == .ping(1))
        #expect(path.isOwed)
        #expect(path.tick(now: 105.9) == nil, "no round trip known: the floor of 1 s")
        #expect(path.nextDeadline() == 106)
        #expect(path.tick(now: 106) == .suspect(silentFor: 6))
        #expect(path.tick(now: 107) == nil, "a suspicion is told once")
        path.heard(now: 107.5)
        #expect(path.tick(now: 108.5) == .suspect(silentFor: 1), "heard, then silent again")
    }

    @Test func anythingHeardKeepsAPathWithAPingOutAlive() {
        var path = PathLiveness(now: 0)
        #expect(path.tick(now: 5) == .ping(1))
        for time in stride(from: 5.5, through: 30, by: 0.5) {
            path.heard(now: time)
            #expect(path.tick(now: time + 0.4) == nil, "a flood whose pong waits behind it is not a dead path")
        }
    }

    @Test func pongsGiveTheSmoothedRoundTripAndItSetsTheSilenceLimit() {
        var path = PathLiveness(now: 0)
        #expect(path.tick(now: 5) == .ping(1))
        path.pong(1, now: 5.5)
        #expect(path.smoothedRTT == 0.5 && path.rttVariation == 0.25)
        #expect(path.silenceLimit == 2, "4 round trips of 0.5 s")
        #expect(!path.isOwed)
        #expect(path.tick(now: 10.5) == .ping(2))
        path.pong(2, now: 10.75)
        // RFC 6298: RTTVAR = 3/4 · 0.25 + 1/4 · |0.5 − 0.25|, SRTT = 7/8 · 0.5 + 1/8 · 0.25.
        #expect(path.rttVariation == 0.25)
        #expect(path.smoothedRTT == 0.46875)
        path.pong(7, now: 11)
        #expect(path.smoothedRTT == 0.46875, "a pong for no ping out is no sample")
    }

    @Test func aKeystrokeIsCoveredByAPingWithinAQuarterSecond() {
        var path = PathLiveness(now: 0)
        path.sentSessionMessage()
        #expect(path.tick(now: 1) == .ping(1), "the first keystroke's ping goes at once")
        path.pong(1, now: 1.01)
        path.sentSessionMessage()
        #expect(path.tick(now: 1.1) == nil, "a ping went 0.1 s ago: this one waits")
        #expect(path.nextDeadline() == 1.25)
        #expect(path.tick(now: 1.25) == .ping(2))
        path.sentSessionMessage()
        #expect(path.tick(now: 1.6) == nil, "a ping is out: it covers this keystroke too")
        #expect(path.tick(now: 2.2) == nil)
        #expect(path.tick(now: 2.25) == .suspect(silentFor: 1.24), "nothing came: 1 s after the ping")
    }

    @Test func aFailedRaceWaitsBeforeTheNextSuspicion() {
        var path = PathLiveness(now: 0)
        #expect(path.tick(now: 5) == .ping(1))
        #expect(path.tick(now: 6) == .suspect(silentFor: 6))
        path.suspectAgain(after: 8)
        #expect(path.tick(now: 7.9) == nil)
        #expect(path.nextDeadline() == 8)
        #expect(path.tick(now: 8) == .suspect(silentFor: 8))
    }
}

/// `DeviceInputLog`: what a resume resends.
@Suite struct DeviceInputLogTests {
    @Test func aResumeResendsExactlyWhatTheComputerDidNotReceive() {
        var log = DeviceInputLog()
        log.record(Array("echo one\r".utf8))
        log.record(Array("echo two\r".utf8))
        #expect(log.sent == 18)
        #expect(log.rewind(toReceived: 9) == Array("echo two\r".utf8))
        #expect(log.sent == 9, "the count goes back to what arrived")
        #expect(log.rewind(toReceived: 9) == [], "everything arrived: nothing again")
        #expect(log.rewind(toReceived: 10) == nil, "more than was sent is no answer to act on")
        log.record(Array("x".utf8))
        #expect(log.rewind(toReceived: 9) == Array("x".utf8))
    }

    @Test func onlyTheLastMebibyteIsKept() {
        var log = DeviceInputLog()
        let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
        for _ in 0..<20 { log.record(chunk) }
        let sent = log.sent
        #expect(sent == 20 * 64 * 1024)
        #expect(log.rewind(toReceived: sent - UInt64(DeviceInputLog.capacity) - 1) == nil, "no longer kept")
        #expect(log.sent == sent, "left alone")
        #expect(log.rewind(toReceived: sent - UInt64(DeviceInputLog.capacity))?.count == DeviceInputLog.capacity)
        log.reset()
        #expect(log.sent == 0)
    }
}

/// `PathWindow`: the window a device asks for, from what the path delivers.
@Suite struct PathWindowTests {
    /// Feeds `rate` bytes a second for `seconds` in 10 ms steps from `start`; the changes asked for.
    static func feed(_ window: inout PathWindow, rate: Double, seconds: Double, from start: Double) -> [Int] {
        var changes: [Int] = []
        var time = start
        while time < start + seconds {
            time += 0.01
            if let change = window.received(Int(rate * 0.01), now: time) { changes.append(change) }
        }
        return changes
    }

    @Test func aSlowLinkGetsTwoBandwidthDelayProductsAndWhatComesBetweenCredits() {
        var window = PathWindow(ceiling: 4 * 1024 * 1024)
        #expect(window.current == PathWindow.floor, "it starts small")
        window.roundTrip(0.1)
        // 20 Mbit/s: 2.5 MB/s, at 100 ms.
        let changes = Self.feed(&window, rate: 2_500_000, seconds: 2, from: 0)
        let wanted = 2 * 2_500_000 * (0.1 + PathWindow.creditInterval)
        #expect(!changes.isEmpty)
        #expect(abs(Double(window.current) - wanted) < wanted * 0.3, "\(window.current) against \(wanted)")
        #expect(window.current < 1024 * 1024, "well under the 4 MiB a flood would otherwise queue")
    }

    /// Output reaches the screen a message at a time: 256 KiB messages at 2.5 MB/s on average,
    /// each up to 90 ms late (read when the device got to it). The window is still about two
    /// bandwidth-delay products; the best single interval (two messages a few milliseconds
    /// apart) asked for 1.2 MB here, and off a real relay road 3.6 MB.
    @Test func messagesArrivingInLumpsDoNotInflateTheRate() {
        var window = PathWindow(ceiling: 4 * 1024 * 1024)
        window.roundTrip(0.1)
        let lump = 256 * 1024
        let spacing = Double(lump) / 2_500_000
        var seed: UInt64 = 12345
        for index in 1..<60 {
            seed = (seed &* 1_103_515_245 &+ 12345) % (1 << 31)
            let late = Double(seed) / Double(1 << 31) * 0.09
            _ = window.received(lump, now: Double(index) * spacing + late)
        }
        let wanted = 2 * 2_500_000 * (0.1 + PathWindow.creditInterval)
        #expect(abs(Double(window.current) - wanted) < wanted * 0.2, "\(window.current) against \(wanted)")
    }

    /// The first round trip measured under load (0.43 s off a relay road of 0.1 s) makes the
    /// window too large; once a truer one comes, the window comes back down, although no
    /// interval then carries a credit's worth of the large window.
    @Test func aWindowGrownTooLargeComesBackDown() {
        var window = PathWindow(ceiling: 4 * 1024 * 1024)
        window.roundTrip(0.43)
        _ = Self.feed(&window, rate: 2_500_000, seconds: 0.5, from: 0)
        #expect(window.current > 1024 * 1024, "\(window.current): the slow round trip's window")
        window.roundTrip(0.1)
        _ = Self.feed(&window, rate: 2_500_000, seconds: 2, from: 0.5)
        let wanted = 2 * 2_500_000 * (0.1 + PathWindow.creditInterval)
        #expect(abs(Double(window.current) - wanted) < wanted * 0.3, "\(window.current) against \(wanted)")
    }

    @Test func aFastPathGrowsToTheCeilingAndAQuietSpellChangesNothing() {
        var window = PathWindow(ceiling: 4 * 1024 * 1024)
        window.roundTrip(0.0005)
        _ = Self.feed(&window, rate: 40_000_000, seconds: 2, from: 0)
        #expect(window.current == 4 * 1024 * 1024, "40 MB/s needs the whole window")
        let quiet = Self.feed(&window, rate: 1000, seconds: 5, from: 2)
        #expect(quiet == [] && window.current == 4 * 1024 * 1024, "typing says nothing about the path")
    }

    @Test func theWindowStaysWithinItsFloorAndCeiling() {
        var small = PathWindow(ceiling: 64 * 1024)
        #expect(small.current == 64 * 1024, "a device window under the floor is the ceiling")
        _ = Self.feed(&small, rate: 50_000_000, seconds: 1, from: 0)
        #expect(small.current == 64 * 1024)
        var slow = PathWindow(ceiling: 4 * 1024 * 1024)
        slow.roundTrip(0.01)
        _ = Self.feed(&slow, rate: 200_000, seconds: 2, from: 0)
        #expect(slow.current == PathWindow.floor, "never below the floor")
    }
}
