import Foundation
import SessionProtocol
import Testing

/// `HostSessionTable`, the computer's side of the session protocol, driven as the pure state
/// machine it is: fake times, fixed device ids and a counting `random`, so every token is known.
@Suite struct HostSessionTableTests {
    typealias Table = HostSessionTable
    static let phone = UUID(uuidString: "00000000-0000-0000-0000-0000000000A1")!
    static let tablet = UUID(uuidString: "00000000-0000-0000-0000-0000000000B2")!
    static let megabyte = 1024 * 1024
    /// The computer's frame budget.
    static let rate = FrameBudget.computer.rate
    static let burst = Int(FrameBudget.computer.burst)

    /// Tokens 1, 2, 3…: token n is sixteen bytes of n.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count: UInt8 = 0
        func next(_ size: Int) -> [UInt8] {
            lock.withLock {
                count &+= 1
                return [UInt8](repeating: count, count: size)
            }
        }
    }

    static func token(_ n: UInt8) -> [UInt8] { [UInt8](repeating: n, count: SessionMessage.tokenSize) }

    static func table(_ configure: (inout Table.Settings) -> Void = { _ in }) -> Table {
        var settings = Table.Settings()
        configure(&settings)
        let counter = Counter()
        return Table(settings: settings, random: { counter.next($0) })
    }

    static func bytes(_ range: Range<Int>) -> [UInt8] { range.map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 8) } }

    /// Everything the device may be sent, taking the budget as it refills (0.01 s a call).
    /// How far an attached session with the tests' 4 KiB window may be read beyond its credit:
    /// the window and a frame.
    static let ahead = UInt64(4096 + Table.readAhead)

    static func drain(_ table: inout Table, _ device: UUID, _ now: inout Double) -> [SessionMessage] {
        var all: [SessionMessage] = []
        while true {
            now += 0.01
            let batch = table.messages(for: device, now: now)
            if batch.isEmpty { return all }
            all += batch
        }
    }

    /// The text of `messages` when they are exactly one refusal of `stream` for `reason`; nil
    /// (recorded as an issue) otherwise.
    static func onlyRefusal(
        _ messages: [SessionMessage], stream: UInt32, _ reason: SessionRefusal,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> String? {
        guard messages.count == 1, case .refused(stream, reason, let text) = messages[0] else {
            Issue.record(
                "not one refusal of stream \(stream) for \(reason): \(messages)", sourceLocation: sourceLocation)
            return nil
        }
        return text
    }

    /// The output messages' bytes for `stream`, checked to follow on from `from` without a gap.
    static func output(_ messages: [SessionMessage], stream: UInt32, from: UInt64) -> [UInt8] {
        var next = from
        var bytes: [UInt8] = []
        for case .output(let s, let offset, let data) in messages where s == stream {
            #expect(offset == next, "output at \(offset), expected \(next)")
            #expect(data.count <= SessionMessage.maximumData && !data.isEmpty)
            next = offset + UInt64(data.count)
            bytes += data
        }
        return bytes
    }

    static func isDrop(_ actions: [Table.Action], _ device: UUID) -> Bool {
        guard actions.count == 1, case .dropConnection(let who, let reason) = actions[0] else { return false }
        return who == device && !reason.isEmpty
    }

    /// Opens a session on `stream` and has its PTY start; its id and token, the started message drained.
    static func start(
        _ table: inout Table, _ device: UUID, stream: UInt32, window: Int = 4096, name: String? = nil,
        _ now: inout Double
    ) throws -> (id: Table.SessionID, token: [UInt8]) {
        let opened = table.received(
            .open(stream: stream, name: name, cols: 80, rows: 24, window: window), from: device, now: now)
        guard case .spawn(let id, let who, .session(let spawnName), 80, 24, false) = try #require(opened.last) else {
            Issue.record("no spawn: \(opened)")
            throw CancellationError()
        }
        #expect(who == device && spawnName == name)
        let spawned = table.spawned(id, failure: nil)
        #expect(
            spawned == [.allowReading(id, upTo: UInt64(min(table.settings.resumeBuffer, window + Table.readAhead)))])
        let messages = drain(&table, device, &now)
        guard messages.count == 1, case .started(stream, let token, 0, _) = messages[0] else {
            Issue.record("not started: \(messages)")
            throw CancellationError()
        }
        return (id, token)
    }

    // MARK: - Regressions

    @Test func theStartNamesTheWindowTheComputerKeepsTo() throws {
        var table = Self.table { $0.resumeBuffer = Self.megabyte }
        var now = 10.0
        table.connected(Self.phone)
        _ = table.received(
            .open(stream: 1, name: nil, cols: 80, rows: 24, window: 8 * Self.megabyte), from: Self.phone, now: now)
        _ = table.spawned(1, failure: nil)
        // The device asked for 8 MiB; the computer keeps at most its 1 MiB resume buffer, and says
        // so, or the device would wait for a quarter of 8 MiB that can never come.
        guard case .started(1, _, 0, let window) = Self.drain(&table, Self.phone, &now).first else {
            Issue.record("not started")
            return
        }
        #expect(window == Self.megabyte)
    }

    @Test func aLaterDropDoesNotRestartTheGraceOfASessionAlreadyAway() throws {
        var table = Self.table { $0.gracePeriod = 900 }
        var now = 10.0
        table.connected(Self.phone)
        let (_, first) = try Self.start(&table, Self.phone, stream: 1, &now)
        _ = try Self.start(&table, Self.phone, stream: 2, &now)
        _ = table.disconnected(Self.phone, now: 100)
        table.connected(Self.phone)
        _ = table.received(
            .resume(stream: 3, token: first, received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone, now: 150)
        _ = table.disconnected(Self.phone, now: 200)
        #expect(table.nextDeadline(now: 201) == 1000, "session 2 has waited since 100")
    }

    // MARK: - Opening

    @Test func anOpenSpawnsAndTheStartFollowsTheSpawn() throws {
        var table = Self.table()
        var now = 100.0
        let stranger = table.received(
            .open(stream: 1, name: nil, cols: 80, rows: 24, window: 4096), from: Self.phone, now: now)
        #expect(stranger == [], "nothing from a device that is not connected")
        #expect(table.sessionCount == 0)

        table.connected(Self.phone)
        let opened = table.received(
            .open(stream: 1, name: "work", cols: 132, rows: 43, window: 4096), from: Self.phone, now: now)
        #expect(opened == [.spawn(1, device: Self.phone, target: .session("work"), cols: 132, rows: 43, screen: false)])
        #expect(table.sessionCount == 1 && table.sessionCount(for: Self.phone) == 1)
        #expect(table.sessionCount(for: Self.tablet) == 0)
        let early = Self.drain(&table, Self.phone, &now)
        #expect(early == [], "nothing is started before the PTY is")

        let spawned = table.spawned(1, failure: nil)
        #expect(spawned == [.allowReading(1, upTo: Self.ahead)], "the window and a frame")
        let started = Self.drain(&table, Self.phone, &now)
        #expect(started == [.started(stream: 1, token: Self.token(1), offset: 0, window: 4096)])

        // A PTY that cannot start: the open is refused and the session is gone.
        let second = table.received(
            .open(stream: 2, name: nil, cols: 80, rows: 24, window: 4096), from: Self.phone, now: now)
        #expect(second == [.spawn(2, device: Self.phone, target: .session(nil), cols: 80, rows: 24, screen: false)])
        let failed = table.spawned(2, failure: "no such program")
        #expect(failed == [.log(Self.phone, "could not start a session: no such program")])
        let refused = Self.drain(&table, Self.phone, &now)
        #expect(refused == [.refused(stream: 2, reason: .startFailed, text: "no such program")])
        #expect(table.sessionCount == 1)
        let late = table.spawned(2, failure: nil)
        #expect(late == [])
    }

    @Test func inputResizeEndOfInputAndCloseReachTheirSession() throws {
        var table = Self.table()
        var now = 1.0
        table.connected(Self.phone)
        let (id, token) = try Self.start(&table, Self.phone, stream: 3, &now)
        let input = table.received(.input(stream: 3, data: Array("ls\r".utf8)), from: Self.phone, now: now)
        #expect(input == [.write(id, Array("ls\r".utf8))])
        let eof = table.received(.endOfInput(stream: 3), from: Self.phone, now: now)
        #expect(eof == [.write(id, [0x04])])
        let resize = table.received(.resize(stream: 3, cols: 100, rows: 30), from: Self.phone, now: now)
        #expect(resize == [.resize(id, cols: 100, rows: 30)])
        for message: SessionMessage in [
            .input(stream: 4, data: [1]), .endOfInput(stream: 4), .resize(stream: 4, cols: 1, rows: 1),
            .credit(stream: 4, consumed: 0), .close(stream: 4),
        ] {
            let none = table.received(message, from: Self.phone, now: now)
            #expect(none == [], "no session on stream 4: \(message)")
        }
        let close = table.received(.close(stream: 3), from: Self.phone, now: now)
        #expect(close == [.hangUp(id), .log(Self.phone, "closed a session")])
        #expect(table.sessionCount == 0)
        let resume = table.received(
            .resume(stream: 5, token: token, received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone, now: now)
        #expect(resume == [])
        let answer = Self.drain(&table, Self.phone, &now)
        guard Self.onlyRefusal(answer, stream: 5, .unknownSession) != nil else { return }
    }

    // MARK: - Output and credit

    @Test func outputFlowsOnlyWithinTheWindowAndAsCreditsCome() throws {
        var table = Self.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, _) = try Self.start(&table, Self.phone, stream: 1, window: 4096, &now)
        let produced = Self.bytes(0..<10_000)
        table.output(id, produced)

        var screen = Self.output(Self.drain(&table, Self.phone, &now), stream: 1, from: 0)
        #expect(screen == Array(produced[0..<4096]), "the window's worth, no more")
        #expect(Self.drain(&table, Self.phone, &now) == [], "the window is full")

        let credit = table.received(.credit(stream: 1, consumed: 1000), from: Self.phone, now: now)
        #expect(credit == [.allowReading(id, upTo: 1000 + Self.ahead)])
        let more = Self.output(Self.drain(&table, Self.phone, &now), stream: 1, from: 4096)
        #expect(more == Array(produced[4096..<5096]))
        screen += more
        let stale = table.received(.credit(stream: 1, consumed: 500), from: Self.phone, now: now)
        #expect(stale == [], "a credit behind the last one changes nothing")
        #expect(Self.drain(&table, Self.phone, &now) == [])

        for consumed: UInt64 in [5096, 9192] {
            _ = table.received(.credit(stream: 1, consumed: consumed), from: Self.phone, now: now)
            screen += Self.output(Self.drain(&table, Self.phone, &now), stream: 1, from: UInt64(screen.count))
        }
        #expect(screen == produced)
    }

    @Test func aBigWindowTakesFullChunks() throws {
        var table = Self.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, _) = try Self.start(&table, Self.phone, stream: 1, window: 4 * Self.megabyte, &now)
        let produced = Self.bytes(0..<300_000)
        table.output(id, produced)
        let messages = Self.drain(&table, Self.phone, &now)
        #expect(messages.count == 5, "65505-byte chunks: \(messages.count)")
        #expect(Self.output(messages, stream: 1, from: 0) == produced)
    }

    // MARK: - Who may do what

    @Test func anotherDeviceNeverResumesTheFirstDevicesSession() throws {
        var table = Self.table { $0.gracePeriod = 60 }
        var now = 10.0
        table.connected(Self.phone)
        table.connected(Self.tablet)
        let (id, token) = try Self.start(&table, Self.phone, stream: 1, &now)
        table.output(id, Self.bytes(0..<100))

        func tabletTries(_ stream: UInt32) -> [SessionMessage] {
            let actions = table.received(
                .resume(stream: stream, token: token, received: 0, cols: 80, rows: 24, window: 4096),
                from: Self.tablet, now: now)
            #expect(actions == [])
            return Self.drain(&table, Self.tablet, &now)
        }
        let whileAttached = tabletTries(1)
        guard Self.onlyRefusal(whileAttached, stream: 1, .unknownSession) != nil else { return }
        // The tablet's stream 1 is not the phone's stream 1.
        let input = table.received(.input(stream: 1, data: [0x41]), from: Self.tablet, now: now)
        #expect(input == [])
        let credit = table.received(.credit(stream: 1, consumed: 100), from: Self.tablet, now: now)
        #expect(credit == [])

        _ = table.disconnected(Self.phone, now: now)
        let whileAway = tabletTries(2)
        guard let text = Self.onlyRefusal(whileAway, stream: 2, .unknownSession) else { return }
        #expect(table.sessionCount(for: Self.phone) == 1 && table.sessionCount(for: Self.tablet) == 0)

        // Once the phone's session ended with a reason, the tablet still hears only "unknown".
        let ended = table.tick(now: now + 60)
        #expect(ended.contains(.hangUp(id)))
        let afterEnd = tabletTries(3)
        #expect(afterEnd == [.refused(stream: 3, reason: .unknownSession, text: text)])

        // The phone itself hears why.
        table.connected(Self.phone)
        _ = table.received(
            .resume(stream: 1, token: token, received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone, now: now)
        let phone = Self.drain(&table, Self.phone, &now)
        guard let why = Self.onlyRefusal(phone, stream: 1, .unknownSession) else { return }
        #expect(why != text && why.contains("1 min"), "\(why)")
    }

    @Test func breakingTheProtocolDropsTheConnection() throws {
        var table = Self.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, token) = try Self.start(&table, Self.phone, stream: 1, &now)
        let twice = table.received(
            .open(stream: 1, name: nil, cols: 80, rows: 24, window: 4096), from: Self.phone, now: now)
        #expect(Self.isDrop(twice, Self.phone), "\(twice)")
        let resumeInUse = table.received(
            .resume(stream: 1, token: token, received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone, now: now)
        #expect(Self.isDrop(resumeInUse, Self.phone), "\(resumeInUse)")
        #expect(table.sessionCount == 1)

        let early = table.received(.credit(stream: 1, consumed: 1), from: Self.phone, now: now)
        #expect(Self.isDrop(early, Self.phone), "nothing was sent yet: \(early)")
        table.output(id, Self.bytes(0..<100))
        _ = Self.drain(&table, Self.phone, &now)
        let beyond = table.received(.credit(stream: 1, consumed: 101), from: Self.phone, now: now)
        #expect(Self.isDrop(beyond, Self.phone), "\(beyond)")
        table.output(id, Self.bytes(100..<200))
        let unsent = table.received(.credit(stream: 1, consumed: 150), from: Self.phone, now: now)
        #expect(Self.isDrop(unsent, Self.phone), "produced is not sent: \(unsent)")
        let exact = table.received(.credit(stream: 1, consumed: 100), from: Self.phone, now: now)
        #expect(exact == [.allowReading(id, upTo: 100 + Self.ahead)])

        for message: SessionMessage in [
            .started(stream: 1, token: token, offset: 0, window: 4096), .output(stream: 1, offset: 0, data: [1]),
            .exit(stream: 1, end: 0, status: 0, signal: nil), .refused(stream: 1, reason: .other, text: ""),
        ] {
            let actions = table.received(message, from: Self.phone, now: now)
            #expect(Self.isDrop(actions, Self.phone), "\(message): \(actions)")
        }
    }

    // MARK: - Away and back

    @Test func awaySessionsReadOnAndAResumeResendsExactlyWhatWasNotReceived() throws {
        var table = Self.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, token) = try Self.start(&table, Self.phone, stream: 1, &now)
        let produced = Self.bytes(0..<3500)
        var sent: [SessionMessage] = []
        for range in [0..<1000, 1000..<2000, 2000..<3000] {
            table.output(id, Array(produced[range]))
            sent += Self.drain(&table, Self.phone, &now)
        }
        #expect(Self.output(sent, stream: 1, from: 0) == Array(produced[0..<3000]))
        let credit = table.received(.credit(stream: 1, consumed: 1000), from: Self.phone, now: now)
        #expect(credit == [.allowReading(id, upTo: 1000 + Self.ahead)])
        let typed = table.received(.input(stream: 1, data: Array("ls\r".utf8)), from: Self.phone, now: now)
        #expect(typed == [.write(id, Array("ls\r".utf8))])

        // The link drops; the last chunk (2000..<3000) never reached the device.
        let away = table.disconnected(Self.phone, now: now)
        #expect(
            away == [.allowReading(id, upTo: 1000 + 8 * UInt64(Self.megabyte))],
            "read on while away, as far as the resume buffer from the last credit")
        #expect(table.messages(for: Self.phone, now: now + 1) == [])
        table.output(id, Array(produced[3000..<3500]))
        let input = table.received(.input(stream: 1, data: [1]), from: Self.phone, now: now)
        #expect(input == [], "nothing from a device that is away")

        table.connected(Self.phone)
        let resumed = table.received(
            .resume(stream: 7, token: token, received: 2000, cols: 90, rows: 30, window: 4096), from: Self.phone,
            now: now)
        #expect(
            resumed == [
                .tellInputReceived(Self.phone, stream: 7, bytes: 3), .resize(id, cols: 90, rows: 30),
                .allowReading(id, upTo: 2000 + Self.ahead),
            ], "the input that arrived is counted, what came while away is not")
        let messages = Self.drain(&table, Self.phone, &now)
        #expect(messages.first == .started(stream: 7, token: token, offset: 2000, window: 4096))
        #expect(Self.output(messages, stream: 7, from: 2000) == Array(produced[2000..<3500]))
        #expect(messages.allSatisfy { $0.stream == 7 })
        let old = table.received(.credit(stream: 1, consumed: 3000), from: Self.phone, now: now)
        #expect(old == [], "the old stream is gone")
        let onNew = table.received(.credit(stream: 7, consumed: 3500), from: Self.phone, now: now)
        #expect(onNew == [.allowReading(id, upTo: 3500 + Self.ahead)])
    }

    @Test func aResumeOutsideWhatIsKeptIsRefusedAsLost() throws {
        for received: UInt64 in [999, 3001] {
            var table = Self.table()
            var now = 10.0
            table.connected(Self.phone)
            let (id, token) = try Self.start(&table, Self.phone, stream: 1, &now)
            table.output(id, Self.bytes(0..<3000))
            _ = Self.drain(&table, Self.phone, &now)
            _ = table.received(.credit(stream: 1, consumed: 1000), from: Self.phone, now: now)
            _ = table.disconnected(Self.phone, now: now)
            table.connected(Self.phone)
            let resumed = table.received(
                .resume(stream: 2, token: token, received: received, cols: 80, rows: 24, window: 4096),
                from: Self.phone, now: now)
            #expect(resumed == [.hangUp(id)], "from \(received)")
            let answer = Self.drain(&table, Self.phone, &now)
            #expect(
                answer == [
                    .refused(
                        stream: 2, reason: .resumePointLost,
                        text: "the output from byte \(received) on is no longer kept")
                ])
            #expect(table.sessionCount == 0)
            _ = table.received(
                .resume(stream: 3, token: token, received: 1000, cols: 80, rows: 24, window: 4096),
                from: Self.phone, now: now)
            let again = Self.drain(&table, Self.phone, &now)
            #expect(again == [.refused(stream: 3, reason: .resumePointLost, text: answer.first.map(Self.text) ?? "")])
        }
    }

    static func text(_ message: SessionMessage) -> String {
        if case .refused(_, _, let text) = message { text } else { "" }
    }

    @Test func aFullResumeBufferWhileAwayStopsReadingAndLosesNothing() throws {
        var table = Self.table { $0.resumeBuffer = 64 * 1024 }
        var now = 10.0
        table.connected(Self.phone)
        let (id, token) = try Self.start(&table, Self.phone, stream: 1, &now)
        let produced = Self.bytes(0..<200_000)
        table.output(id, Array(produced[0..<3000]))
        _ = Self.drain(&table, Self.phone, &now)
        let away = table.disconnected(Self.phone, now: now)
        // What was sent but not credited counts: 3000 of the 64 KiB are already kept, and the PTY
        // may be read up to 64 KiB in all, no further, until the device is back.
        #expect(away == [], "the read limit stays at the resume buffer: \(away)")
        table.output(id, Array(produced[3000..<65536]))
        #expect(table.sessionCount == 1)
        #expect(table.tick(now: now + 60) == [], "a full buffer ends nothing; only the grace period does")

        table.connected(Self.phone)
        let resumed = table.received(
            .resume(stream: 1, token: token, received: 3000, cols: 80, rows: 24, window: 64 * 1024),
            from: Self.phone, now: now)
        #expect(
            resumed == [
                .tellInputReceived(Self.phone, stream: 1, bytes: 0), .resize(id, cols: 80, rows: 24),
                .allowReading(id, upTo: 3000 + 64 * 1024),
            ],
            "what the device says it received counts as consumed")
        let messages = Self.drain(&table, Self.phone, &now)
        #expect(messages.first == .started(stream: 1, token: token, offset: 3000, window: 64 * 1024))
        #expect(Self.output(messages, stream: 1, from: 3000) == Array(produced[3000..<65536]))
        let credit = table.received(.credit(stream: 1, consumed: 65536), from: Self.phone, now: now)
        #expect(credit == [.allowReading(id, upTo: 65536 + 64 * 1024)], "the program may write on")
        table.output(id, Array(produced[65536..<100_000]))
        #expect(
            Self.output(Self.drain(&table, Self.phone, &now), stream: 1, from: 65536)
                == Array(produced[65536..<100_000]))
    }

    @Test func theGracePeriodHangsUpAndALaterResumeHearsWhy() throws {
        var table = Self.table { $0.gracePeriod = 120 }
        var now = 100.0
        table.connected(Self.phone)
        let (id, token) = try Self.start(&table, Self.phone, stream: 1, &now)
        let (other, otherToken) = try Self.start(&table, Self.phone, stream: 2, &now)
        _ = table.disconnected(Self.phone, now: 200)
        let deadline = table.nextDeadline(now: 201)
        #expect(deadline == 320)
        table.exited(other, status: 0, signal: nil)
        let before = table.tick(now: 319.9)
        #expect(before == [])
        #expect(table.sessionCount == 2)
        let expired = table.tick(now: 320)
        #expect(expired.filter { $0 == .hangUp(id) }.count == 1)
        #expect(!expired.contains(.hangUp(other)), "an exited session is not hung up again")
        #expect(
            expired.filter { $0 == .log(Self.phone, "a session waited 2 min for its device and was ended") }.count == 2)
        #expect(expired.count == 3)
        #expect(table.sessionCount == 0)
        #expect(table.nextDeadline(now: 321) == nil)
        #expect(table.tick(now: 400) == [])

        table.connected(Self.phone)
        _ = table.received(
            .resume(stream: 1, token: token, received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone, now: 400)
        _ = table.received(
            .resume(stream: 2, token: otherToken, received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone,
            now: 400)
        var later = 400.0
        let answers = Self.drain(&table, Self.phone, &later)
        #expect(answers.count == 2)
        #expect(
            answers.first
                == .refused(
                    stream: 1, reason: .unknownSession,
                    text: "the session was hung up after 2 min without the device"))
        guard case .refused(2, .unknownSession, let ended) = answers.last else {
            Issue.record("\(answers)")
            return
        }
        #expect(ended.contains("ended (exit status"), "a session that ended by itself says so: \(ended)")
        let generic = "the computer does not have this session (herdr-host restarted, or it ended)"
        // Endings are remembered for twice the grace period, an hour at least.
        _ = table.tick(now: 320 + 3599)
        _ = table.received(
            .resume(stream: 3, token: token, received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone,
            now: 320 + 3599)
        let remembered = Self.drain(&table, Self.phone, &later)
        #expect(
            remembered.first.map {
                if case .refused(3, .unknownSession, let text) = $0 { text != generic } else { false }
            } == true)
        _ = table.tick(now: 320 + 3601)
        _ = table.received(
            .resume(stream: 4, token: token, received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone,
            now: 320 + 3601)
        let forgotten = Self.drain(&table, Self.phone, &later)
        #expect(forgotten == [.refused(stream: 4, reason: .unknownSession, text: generic)])
    }

    @Test func aResumeWithinTheGracePeriodCarriesOn() throws {
        var table = Self.table { $0.gracePeriod = 120 }
        var now = 100.0
        table.connected(Self.phone)
        let (id, token) = try Self.start(&table, Self.phone, stream: 1, &now)
        _ = table.disconnected(Self.phone, now: 200)
        #expect(table.tick(now: 319.5) == [])
        table.connected(Self.phone)
        let resumed = table.received(
            .resume(stream: 2, token: token, received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone,
            now: 319.5)
        #expect(resumed.contains(.resize(id, cols: 80, rows: 24)))
        #expect(table.tick(now: 1000) == [], "attached again: no grace runs")
        #expect(table.sessionCount == 1)
    }

    // MARK: - Exit

    @Test func theExitComesAfterAllOutputAndCarriesTheEnd() throws {
        var table = Self.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, _) = try Self.start(&table, Self.phone, stream: 1, window: 4096, &now)
        let produced = Self.bytes(0..<6000)
        table.output(id, produced)
        table.exited(id, status: 3, signal: nil)
        let first = Self.drain(&table, Self.phone, &now)
        #expect(Self.output(first, stream: 1, from: 0) == Array(produced[0..<4096]))
        #expect(!first.contains { if case .exit = $0 { true } else { false } }, "output is still to come")
        #expect(table.sessionCount == 1)
        _ = table.received(.credit(stream: 1, consumed: 4096), from: Self.phone, now: now)
        let rest = Self.drain(&table, Self.phone, &now)
        #expect(Self.output(rest, stream: 1, from: 4096) == Array(produced[4096..<6000]))
        #expect(rest.last == .exit(stream: 1, end: 6000, status: 3, signal: nil))
        #expect(rest.filter { if case .exit = $0 { true } else { false } }.count == 1)
        // Kept until the device closes the stream, in case the exit is lost in a drop.
        #expect(table.sessionCount == 1)
        #expect(Self.drain(&table, Self.phone, &now) == [])
        #expect(table.received(.close(stream: 1), from: Self.phone, now: now) == [], "no hang-up for an ended session")
        #expect(table.sessionCount == 0)

        for (signal, name) in [(Int32(9), "KILL"), (1, "HUP"), (15, "TERM"), (64, "SIG64")] {
            let (killed, _) = try Self.start(&table, Self.phone, stream: 2, &now)
            table.exited(killed, status: nil, signal: signal)
            let end = Self.drain(&table, Self.phone, &now)
            #expect(end == [.exit(stream: 2, end: 0, status: nil, signal: name)])
            _ = table.received(.close(stream: 2), from: Self.phone, now: now)
        }
    }

    @Test func anExitWhileAwayWaitsForTheResume() throws {
        var table = Self.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, token) = try Self.start(&table, Self.phone, stream: 1, &now)
        table.output(id, Self.bytes(0..<100))
        _ = Self.drain(&table, Self.phone, &now)
        _ = table.disconnected(Self.phone, now: now)
        table.output(id, Self.bytes(100..<150))
        table.exited(id, status: 0, signal: nil)
        table.connected(Self.phone)
        let resumed = table.received(
            .resume(stream: 2, token: token, received: 100, cols: 80, rows: 24, window: 4096), from: Self.phone,
            now: now)
        #expect(
            resumed == [
                .tellInputReceived(Self.phone, stream: 2, bytes: 0),
                .allowReading(id, upTo: 100 + Self.ahead),
            ], "no resize for an exited program")
        let messages = Self.drain(&table, Self.phone, &now)
        #expect(messages.first == .started(stream: 2, token: token, offset: 100, window: 4096))
        #expect(Self.output(messages, stream: 2, from: 100) == Self.bytes(100..<150))
        #expect(messages.last == .exit(stream: 2, end: 150, status: 0, signal: nil))
        #expect(messages.count == 3)
    }

    // MARK: - Sessions per device

    @Test func theSessionLimitEvictsTheOldestDetachedSessionOrRefuses() throws {
        var table = Self.table { $0.sessionsPerDevice = 3 }
        var now = 10.0
        table.connected(Self.phone)
        table.connected(Self.tablet)
        var tokens: [[UInt8]] = []
        for stream: UInt32 in 1...3 { tokens.append(try Self.start(&table, Self.phone, stream: stream, &now).token) }
        let full = table.received(
            .open(stream: 4, name: nil, cols: 80, rows: 24, window: 4096), from: Self.phone, now: now)
        #expect(full == [])
        let refused = Self.drain(&table, Self.phone, &now)
        #expect(
            refused == [
                .refused(
                    stream: 4, reason: .tooManySessions, text: "this device already has 3 sessions open on the computer"
                )
            ])
        #expect(table.sessionCount == 3)
        // Another device has its own count.
        _ = try Self.start(&table, Self.tablet, stream: 1, &now)

        _ = table.disconnected(Self.phone, now: now)
        table.connected(Self.phone)
        _ = table.received(
            .resume(stream: 10, token: tokens[2], received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone,
            now: now)
        _ = Self.drain(&table, Self.phone, &now)
        let evicting = table.received(
            .open(stream: 11, name: nil, cols: 80, rows: 24, window: 4096), from: Self.phone, now: now)
        #expect(evicting == [.hangUp(1), .spawn(5, device: Self.phone, target: .session(nil), cols: 80, rows: 24, screen: false)])
        #expect(table.sessionCount(for: Self.phone) == 3 && table.sessionCount(for: Self.tablet) == 1)
        _ = table.spawned(5, failure: nil)

        _ = table.received(
            .resume(stream: 12, token: tokens[0], received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone,
            now: now)
        _ = table.received(
            .resume(stream: 13, token: tokens[1], received: 0, cols: 80, rows: 24, window: 4096), from: Self.phone,
            now: now)
        let answers = Self.drain(&table, Self.phone, &now)
        #expect(
            answers.contains(
                .refused(
                    stream: 12, reason: .unknownSession, text: "the device opened more sessions than the computer keeps"
                )))
        #expect(answers.contains(.started(stream: 13, token: tokens[1], offset: 0, window: 4096)))
        #expect(answers.contains(.started(stream: 11, token: Self.token(5), offset: 0, window: 4096)))

        // All three attached now: the next open is refused and nothing is hung up.
        let again = table.received(
            .open(stream: 14, name: nil, cols: 80, rows: 24, window: 4096), from: Self.phone, now: now)
        #expect(again == [])
        let last = Self.drain(&table, Self.phone, &now)
        guard Self.onlyRefusal(last, stream: 14, .tooManySessions) != nil else { return }
        #expect(table.sessionCount(for: Self.phone) == 3)
    }

    // MARK: - Budget and deadlines

    @Test func noSecondCarriesMoreThanTheBudget() throws {
        var table = Self.table()
        var now = 50.0
        table.connected(Self.phone)
        let (id, _) = try Self.start(&table, Self.phone, stream: 1, window: 4 * Self.megabyte, &now)
        var times: [Double] = []
        var calls = 0
        var sent: [SessionMessage] = []
        for step in 1...3000 {
            let time = 60 + Double(step) * 0.001
            table.output(id, Self.bytes(0..<100))
            let batch = table.messages(for: Self.phone, now: time)
            #expect(batch.count <= Self.burst)
            times += Array(repeating: time, count: batch.count)
            sent += batch
            calls += batch.isEmpty ? 0 : 1
        }
        var most = 0
        var last = 0
        for first in times.indices {
            last = max(last, first)
            while last + 1 < times.count, times[last + 1] <= times[first] + 1 { last += 1 }
            most = max(most, last - first + 1)
        }
        #expect(most <= Int(Self.rate) + Self.burst, "\(most) messages in one second")
        #expect(most >= Int(Self.rate), "the output kept the budget busy: \(most)")
        #expect(calls > 1000)
        let delivered = Self.output(sent, stream: 1, from: 0)
        #expect(delivered.count <= 300_000 && delivered.count >= 299_000, "\(delivered.count)")

        // Queued answers count too: eight refusals, a burst at once, then one per 1/rate s.
        var small = Self.table { $0.sessionsPerDevice = 1 }
        var clock = 10.0
        small.connected(Self.phone)
        _ = try Self.start(&small, Self.phone, stream: 1, &clock)
        for stream: UInt32 in 2...9 {
            _ = small.received(
                .open(stream: stream, name: nil, cols: 80, rows: 24, window: 4096), from: Self.phone, now: 20)
        }
        let burst = small.messages(for: Self.phone, now: 20)
        #expect(burst.map(\.stream) == Array(UInt32(2)..<UInt32(2 + Self.burst)))
        let none = small.messages(for: Self.phone, now: 20 + 0.5 / Self.rate)
        #expect(none == [])
        let one = small.messages(for: Self.phone, now: 20 + 1.01 / Self.rate)
        #expect(one.map(\.stream) == [UInt32(2 + Self.burst)])
    }

    @Test func onTheHomeRoadEverythingQueuedGoesAtOnce() throws {
        var small = Self.table { $0.sessionsPerDevice = 1 }
        var clock = 10.0
        small.connected(Self.phone, budget: .unlimited)
        _ = try Self.start(&small, Self.phone, stream: 1, &clock)
        for stream: UInt32 in 2...9 {
            _ = small.received(
                .open(stream: stream, name: nil, cols: 80, rows: 24, window: 4096), from: Self.phone, now: 20)
        }
        #expect(small.messages(for: Self.phone, now: 20).map(\.stream) == Array(UInt32(2)...UInt32(9)))
        // Back on the relay, the cap again.
        small.connected(Self.phone)
        for stream: UInt32 in 2...9 {
            _ = small.received(
                .open(stream: stream, name: nil, cols: 80, rows: 24, window: 4096), from: Self.phone, now: 30)
        }
        #expect(small.messages(for: Self.phone, now: 30).count == Self.burst)
    }

    @Test func theNextDeadlineIsTheBudgetsRefillOrTheGrace() throws {
        var table = Self.table { $0.gracePeriod = 900 }
        #expect(table.nextDeadline(now: 5) == nil)
        table.connected(Self.phone)
        _ = table.received(
            .open(stream: 1, name: nil, cols: 80, rows: 24, window: 4 * Self.megabyte), from: Self.phone, now: 10)
        #expect(table.nextDeadline(now: 10) == nil, "nothing to send until the PTY started")
        _ = table.spawned(1, failure: nil)
        #expect(table.nextDeadline(now: 10) == 10, "the started message may go now")
        table.output(1, Self.bytes(0..<300_000))
        let burst = table.messages(for: Self.phone, now: 10)
        #expect(burst.count == Self.burst)
        let next = table.nextDeadline(now: 10)
        let refill = try #require(next)
        #expect(abs(refill - (10 + 1.0 / Self.rate)) < 1e-9, "\(refill)")
        let halfway = table.nextDeadline(now: 10 + 0.5 / Self.rate)
        #expect(abs((halfway ?? 0) - (10 + 1.0 / Self.rate)) < 1e-9)
        var now = 10.0
        let rest = Self.drain(&table, Self.phone, &now)
        #expect(rest.count == 6 - Self.burst, "the started message and five chunks of output in all")
        #expect(table.nextDeadline(now: now) == nil, "everything sent, nothing due")

        // A full window is nothing due either.
        var small = Self.table()
        var clock = 10.0
        small.connected(Self.phone)
        let (id, _) = try Self.start(&small, Self.phone, stream: 1, window: 4096, &clock)
        small.output(id, Self.bytes(0..<5000))
        #expect(small.nextDeadline(now: clock) == clock)
        _ = Self.drain(&small, Self.phone, &clock)
        #expect(small.nextDeadline(now: clock) == nil)
        // An exit that may go is due.
        _ = small.received(.credit(stream: 1, consumed: 4096), from: Self.phone, now: clock)
        _ = Self.drain(&small, Self.phone, &clock)
        small.exited(id, status: 0, signal: nil)
        #expect(small.nextDeadline(now: clock) == clock)

        // Away: the earliest grace deadline.
        _ = try Self.start(&table, Self.phone, stream: 2, &now)
        _ = table.disconnected(Self.phone, now: 100)
        #expect(table.nextDeadline(now: 101) == 1000)
        table.connected(Self.phone)
        let resumed = table.received(
            .resume(stream: 3, token: Self.token(1), received: 300_000, cols: 80, rows: 24, window: 4096),
            from: Self.phone, now: 150)
        #expect(resumed.contains(.resize(1, cols: 80, rows: 24)))
        #expect(table.nextDeadline(now: 150) == 150, "the started message may go now")
        var later = 150.0
        _ = Self.drain(&table, Self.phone, &later)
        #expect(table.nextDeadline(now: later) == 1000, "session 2 is still away")
    }

    // MARK: - With the device's side

    /// Runs a `DeviceSession` against the table: the PTY produces as far as the table lets it be
    /// read, the device puts everything on the screen at once and credits as it says. With
    /// `dropAt`, the link drops once that much is on the screen (what was in flight is lost) and
    /// the device resumes. The screen.
    static func run(
        settings: (inout Table.Settings) -> Void, window: Int, total: Int, dropAt: Int? = nil, steps: Int = 20_000
    ) throws -> [UInt8] {
        var table = Self.table(settings)
        var device = DeviceSession(name: nil, window: window)
        var now = 10.0
        var readLimit: UInt64 = 0
        var produced = 0
        var screen: [UInt8] = []
        var dropped = dropAt == nil
        var starts: [DeviceSession.StartKind] = []
        let source = Self.bytes(0..<total)
        func perform(_ actions: [Table.Action]) {
            for action in actions {
                if case .allowReading(_, let upTo) = action { readLimit = upTo }
                #expect(!Self.isDrop([action], Self.phone), "\(action)")
            }
        }
        table.connected(Self.phone)
        perform(table.received(device.attachMessage(cols: 80, rows: 24), from: Self.phone, now: now))
        perform(table.spawned(1, failure: nil))
        for _ in 0..<steps where screen.count < total {
            now += 0.005
            let chunk = min(64 * 1024, total - produced, Int(clamping: readLimit) - produced)
            if chunk > 0 {
                table.output(1, Array(source[produced..<(produced + chunk)]))
                produced += chunk
            }
            let messages = table.messages(for: Self.phone, now: now)
            if !dropped, let dropAt, screen.count >= dropAt {
                dropped = true
                #expect(messages.contains { if case .output = $0 { true } else { false } }, "output was in flight")
                perform(table.disconnected(Self.phone, now: now))
                table.connected(Self.phone)
                let attach = device.attachMessage(cols: 80, rows: 24)
                guard case .resume = attach else {
                    Issue.record("not a resume: \(attach)")
                    return screen
                }
                perform(table.received(attach, from: Self.phone, now: now))
                continue
            }
            for message in messages {
                switch device.receive(message) {
                case .output(let bytes):
                    screen += bytes
                    if let credit = device.consumed(bytes.count) {
                        perform(
                            table.received(.credit(stream: device.stream, consumed: credit), from: Self.phone, now: now)
                        )
                    }
                case .started(let kind): starts.append(kind)
                case .none: break
                case let other: Issue.record("\(other)")
                }
            }
        }
        #expect(starts == (dropAt == nil ? [.first] : [.first, .resumed]))
        return screen
    }

    @Test func aDeviceGetsEveryByteInOrderAcrossADrop() throws {
        let total = 12 * Self.megabyte
        let screen = try Self.run(
            settings: { _ in }, window: 4 * Self.megabyte, total: total, dropAt: 5 * Self.megabyte)
        #expect(screen.count == total)
        #expect(screen == Self.bytes(0..<total))
    }

    @Test func theSmallestResumeBufferStillCarriesTheDefaultWindow() throws {
        // herdr-host's smallest resume buffer (1 MiB) is exactly a quarter of the device's default
        // window: the device's first credit comes just as the computer's window fills.
        let total = 3 * Self.megabyte
        let screen = try Self.run(
            settings: { $0.resumeBuffer = Self.megabyte }, window: 4 * Self.megabyte, total: total)
        #expect(screen.count == total)
        #expect(screen == Self.bytes(0..<total))
    }
}
