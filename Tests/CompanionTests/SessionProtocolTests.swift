import SessionProtocol
import Testing

/// The session protocol's pure parts: `SessionMessage` (every case's bytes and every bound of its
/// parser), `FrameBudget` (the token bucket that keeps a room under the relay's 500 frames a
/// second), `HostOutputFlow`, `DeviceOutputFlow` and `DeviceSession`.
@Suite struct SessionProtocolTests {
    static let token = (0..<16).map { UInt8($0) &* 17 &+ 3 }
    static let otherToken = [UInt8](repeating: 0xEE, count: 16)

    /// One of every message, with edge values where a field has bounds.
    static let samples: [SessionMessage] = {
        var all: [SessionMessage] = [
            .open(stream: 1, name: "work", cols: 80, rows: 24, window: 4 * 1024 * 1024),
            .open(stream: .max, name: nil, cols: 1000, rows: 1, window: 4 * 1024),
            .open(stream: 0, name: String(repeating: "n", count: 64), cols: 1, rows: 1000, window: 64 * 1024 * 1024),
            .open(stream: 2, name: "a.b_c-D9", cols: 2, rows: 3, window: 5000),
            .resume(
                stream: 7, token: token, received: 0x0102_0304_0506_0708, cols: 120, rows: 40, window: 64 * 1024 * 1024),
            .resume(stream: 0, token: otherToken, received: .max, cols: 1, rows: 1, window: 4 * 1024),
            .started(stream: 2, token: token, offset: 12345, window: 4096),
            .started(stream: .max, token: otherToken, offset: 0, window: 4096),
            .output(stream: 3, offset: .max - 10, data: [0, 1, 0x7B, 255]),
            .output(stream: 3, offset: 0, data: []),
            .output(stream: 3, offset: 42, data: [UInt8](repeating: 0xA5, count: SessionMessage.maximumData)),
            .input(stream: 4, data: Array("ls -l\r".utf8)),
            .input(stream: 4, data: []),
            .input(stream: 4, data: [UInt8](repeating: 0x5A, count: SessionMessage.maximumLength - 5)),
            .resize(stream: 5, cols: 1, rows: 1000),
            .resize(stream: 5, cols: 1000, rows: 1),
            .credit(stream: 6, consumed: 1 << 40),
            .credit(stream: 6, consumed: 0),
            .endOfInput(stream: 8),
            .close(stream: 9),
            .exit(stream: 10, end: 99, status: 0, signal: nil),
            .exit(stream: 10, end: 0, status: -1, signal: "KILL"),
            .exit(stream: 10, end: .max, status: .min, signal: nil),
            .exit(stream: 11, end: 5, status: nil, signal: String(repeating: "S", count: 32)),
            .exit(stream: 11, end: 5, status: nil, signal: nil),
            .refused(stream: 12, reason: .other, text: String(repeating: "t", count: 1024)),
            .refused(stream: 12, reason: .unknownSession, text: "ünïcødé ✓ 🙂"),
        ]
        let reasons: [SessionRefusal] = [
            .unknownSession, .resumePointLost, .startFailed, .tooManySessions, .other,
        ]
        all += reasons.map { .refused(stream: 13, reason: $0, text: "") }
        return all
    }()

    static func parse(_ bytes: [UInt8]) throws(SessionMessageError) -> SessionMessage {
        try SessionMessage(parsing: bytes)
    }

    static func refuses(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try parse(bytes)
            return false
        } catch {
            return true
        }
    }

    // MARK: - SessionMessage: round trips and layout

    @Test func everyMessageRoundTrips() throws {
        var kinds = Set<UInt8>()
        for message in Self.samples {
            let bytes = message.bytes
            #expect(bytes.count <= SessionMessage.maximumLength)
            #expect(ChannelMessage.Kind(firstByteOf: bytes) == .session, "\(message)")
            #expect(try ChannelMessage(parsing: bytes) == .session(message))
            #expect(try Self.parse(bytes) == message)
            #expect(try Self.parse(bytes).stream == message.stream)
            kinds.insert(bytes[0])
        }
        #expect(kinds == Set(0x01...0x0B), "all eleven message types are covered, numbered 1 to 11")
    }

    @Test func theLayoutIsBigEndianWithTheVersionAfterTheTypeOnOpenAndResume() throws {
        #expect(
            SessionMessage.credit(stream: 0x0102_0304, consumed: 0x0A0B_0C0D_0E0F_1011).bytes
                == [0x07, 1, 2, 3, 4, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11])
        #expect(
            SessionMessage.open(stream: 0x0A0B_0C0D, name: "ab", cols: 0x0102, rows: 0x0304, window: 0x0001_0000).bytes
                == [0x01, 0x01, 0x0A, 0x0B, 0x0C, 0x0D, 0x01, 0x02, 0x03, 0x04, 0x00, 0x01, 0x00, 0x00, 2, 0x61, 0x62])
        let resume = SessionMessage.resume(
            stream: 9, token: Self.token, received: 0x0102, cols: 80, rows: 24, window: 4096
        ).bytes
        #expect(Array(resume[0..<6]) == [0x02, 0x01, 0, 0, 0, 9])
        #expect(Array(resume[6..<22]) == Self.token)
        #expect(resume.count == 38)
        #expect(
            SessionMessage.exit(stream: 1, end: 2, status: 3, signal: "HUP").bytes
                == [0x0A, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 3, 3, 0x48, 0x55, 0x50])
        #expect(
            SessionMessage.refused(stream: 1, reason: .tooManySessions, text: "no").bytes
                == [0x0B, 0, 0, 0, 1, 5, 0, 2, 0x6E, 0x6F])
        #expect(SessionMessage.endOfInput(stream: 1).bytes == [0x08, 0, 0, 0, 1])
        #expect(SessionMessage.close(stream: 1).bytes == [0x09, 0, 0, 0, 1])
    }

    @Test func anUnknownRefusalReasonReadsAsOther() throws {
        for raw: UInt8 in [0, 3, 7, 42, 254] {
            let bytes: [UInt8] = [0x0B, 0, 0, 0, 1, raw, 0, 1, 0x78]
            #expect(try Self.parse(bytes) == .refused(stream: 1, reason: .other, text: "x"))
        }
    }

    // MARK: - SessionMessage: bounds

    @Test func aMessageLongerThanOneFrameIsRefused() throws {
        let longest = SessionMessage.output(
            stream: 1, offset: 0, data: [UInt8](repeating: 1, count: SessionMessage.maximumData))
        #expect(longest.bytes.count == SessionMessage.maximumLength)
        #expect(!Self.refuses(longest.bytes))
        #expect(Self.refuses(longest.bytes + [1]))
        let input = SessionMessage.input(
            stream: 1, data: [UInt8](repeating: 1, count: SessionMessage.maximumLength - 4))
        #expect(input.bytes.count == SessionMessage.maximumLength + 1)
        #expect(Self.refuses(input.bytes))
        #expect(Self.refuses([0x05, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 70_000)))
        #expect(SessionMessage.maximumLength == 65518)
        #expect(SessionMessage.maximumData == 65505)
    }

    @Test func openAgentCarriesASessionAndAPaneWithinTheirRules() throws {
        let message = SessionMessage.openAgent(
            stream: 9, session: "work", pane: "w1:p2", cols: 80, rows: 24, window: 65536)
        #expect(
            message.bytes
                == [0x0C, 1, 0, 0, 0, 9, 0, 80, 0, 24, 0, 1, 0, 0, 4] + Array("work".utf8) + [5] + Array("w1:p2".utf8))
        #expect(try SessionMessage(parsing: message.bytes) == message)
        for (session, pane) in [("work", "w1 p2"), ("no way", "w1:p2"), ("", "w1:p2"), ("work", "")] {
            let bytes =
                [0x0C, 1, 0, 0, 0, 9, 0, 80, 0, 24, 0, 1, 0, 0, UInt8(session.utf8.count)] + Array(session.utf8)
                + [UInt8(pane.utf8.count)] + Array(pane.utf8)
            #expect(Self.refuses(bytes), "\(session) \(pane)")
        }
    }

    @Test func anUnknownTypeByteIsRefused() {
        let tail: [UInt8] = [1, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 40)
        for byte: UInt8 in [0x00, 0x15, 0x16, 0x1F, 0x20, 0x7B, 0x80, 0xFF] {
            #expect(Self.refuses([byte] + tail), "type \(byte)")
            #expect(Self.refuses([byte]), "type \(byte) alone")
        }
        #expect(Self.refuses([]))
    }

    @Test func openAndResumeNeedVersionOne() throws {
        let open = SessionMessage.open(stream: 1, name: "w", cols: 80, rows: 24, window: 4096).bytes
        let resume = SessionMessage.resume(stream: 1, token: Self.token, received: 0, cols: 80, rows: 24, window: 4096)
            .bytes
        for bytes in [open, resume] {
            #expect(!Self.refuses(bytes))
            for version: UInt8 in [0, 2, 0xFF] {
                var wrong = bytes
                wrong[1] = version
                #expect(Self.refuses(wrong), "version \(version)")
            }
        }
    }

    @Test func cellsAreOneToAThousand() throws {
        func messages(_ cols: Int, _ rows: Int) -> [SessionMessage] {
            [
                .open(stream: 1, name: nil, cols: cols, rows: rows, window: 4096),
                .resume(stream: 1, token: Self.token, received: 0, cols: cols, rows: rows, window: 4096),
                .resize(stream: 1, cols: cols, rows: rows),
            ]
        }
        for (cols, rows) in [(1, 1), (1000, 1000), (1, 1000), (1000, 1), (80, 24)] {
            for message in messages(cols, rows) { #expect(try Self.parse(message.bytes) == message) }
        }
        for (cols, rows) in [(0, 24), (80, 0), (1001, 24), (80, 1001), (0, 0), (65535, 65535)] {
            for message in messages(cols, rows) { #expect(Self.refuses(message.bytes), "\(cols)×\(rows) \(message)") }
        }
    }

    @Test func theWindowIsWithinItsRange() throws {
        let low = SessionMessage.windowRange.lowerBound
        let high = SessionMessage.windowRange.upperBound
        #expect(low == 4096 && high == 64 * 1024 * 1024)
        func messages(_ window: Int) -> [SessionMessage] {
            [
                .open(stream: 1, name: nil, cols: 80, rows: 24, window: window),
                .resume(stream: 1, token: Self.token, received: 0, cols: 80, rows: 24, window: window),
            ]
        }
        for window in [low, low + 1, high - 1, high] {
            for message in messages(window) { #expect(try Self.parse(message.bytes) == message) }
        }
        for window in [0, 1, low - 1, high + 1, Int(UInt32.max)] {
            for message in messages(window) { #expect(Self.refuses(message.bytes), "window \(window)") }
        }
    }

    @Test func openTakesOnlyHerdrSessionNames() throws {
        for name in ["a", "A-b_c.9", String(repeating: "x", count: 64), "..a", ".hidden"] {
            let message = SessionMessage.open(stream: 1, name: name, cols: 80, rows: 24, window: 4096)
            #expect(try Self.parse(message.bytes) == message, "\(name)")
        }
        for name in [".", "..", "a b", "a/b", "a:b", "é", "tab\t", String(repeating: "x", count: 65)] {
            let message = SessionMessage.open(stream: 1, name: name, cols: 80, rows: 24, window: 4096)
            #expect(Self.refuses(message.bytes), "\(name.debugDescription)")
        }
        // An empty name is herdr's default session.
        let empty = SessionMessage.open(stream: 1, name: "", cols: 80, rows: 24, window: 4096).bytes
        #expect(try Self.parse(empty) == .open(stream: 1, name: nil, cols: 80, rows: 24, window: 4096))
    }

    @Test func everyPrefixOfAMessageIsRefusedOrIsTheSameMessageCutShort() throws {
        var checked = 0
        for message in Self.samples {
            let bytes = message.bytes
            // Output and input carry their data to the end of the message: a prefix that keeps the
            // header is a valid, shorter chunk. Every other message has a known length.
            let header: Int? =
                switch message {
                case .output: 13
                case .input: 5
                default: nil
                }
            let lengths = bytes.count > 300 ? Array(0..<300) + [bytes.count - 1] : Array(0..<bytes.count)
            for length in lengths {
                let prefix = Array(bytes.prefix(length))
                if let header, length >= header {
                    let parsed = try Self.parse(prefix)
                    switch (parsed, message) {
                    case (.output(let s1, let o1, let d1), .output(let s2, let o2, let d2)):
                        #expect(s1 == s2 && o1 == o2 && d1 == Array(d2.prefix(length - header)))
                    case (.input(let s1, let d1), .input(let s2, let d2)):
                        #expect(s1 == s2 && d1 == Array(d2.prefix(length - header)))
                    default:
                        Issue.record("\(message) cut to \(length) bytes parsed as \(parsed)")
                    }
                } else {
                    #expect(Self.refuses(prefix), "\(message) cut to \(length) of \(bytes.count) bytes")
                    checked += 1
                }
            }
        }
        #expect(checked > 500)
    }

    @Test func trailingBytesAreRefused() {
        for message in Self.samples {
            if case .output = message { continue }
            if case .input = message { continue }
            #expect(Self.refuses(message.bytes + [0]), "\(message)")
            #expect(Self.refuses(message.bytes + [UInt8](repeating: 0x41, count: 7)), "\(message)")
        }
    }

    @Test func textThatIsNotUTF8IsRefused() throws {
        let badSequences: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF]]
        for bad in badSequences {
            // open: the name is the last field.
            var open = SessionMessage.open(stream: 1, name: nil, cols: 80, rows: 24, window: 4096).bytes
            open[open.count - 1] = UInt8(bad.count)
            #expect(Self.refuses(open + bad))
            // exit: the signal name is the last field.
            var exit = SessionMessage.exit(stream: 1, end: 0, status: nil, signal: nil).bytes
            exit[exit.count - 1] = UInt8(bad.count)
            #expect(Self.refuses(exit + bad))
            #expect(!Self.refuses(Array(exit.dropLast()) + [1, 0x41]), "the same message with a good name parses")
            // refused: a two-byte length, then the text.
            let refused: [UInt8] = [0x0B, 0, 0, 0, 1, 1, 0, UInt8(bad.count)] + bad
            #expect(Self.refuses(refused))
            #expect(!Self.refuses([0x0B, 0, 0, 0, 1, 1, 0, 1, 0x41]))
        }
    }

    @Test func exitStatusFlagIsZeroOrOne() throws {
        let bytes = SessionMessage.exit(stream: 1, end: 7, status: 9, signal: nil).bytes
        #expect(bytes[13] == 1)
        var none = bytes
        none[13] = 0
        #expect(try Self.parse(none) == .exit(stream: 1, end: 7, status: nil, signal: nil))
        for flag: UInt8 in [2, 3, 0x80, 0xFF] {
            var wrong = bytes
            wrong[13] = flag
            #expect(Self.refuses(wrong), "flag \(flag)")
        }
    }

    @Test func signalNamesAreAtMost32Bytes() throws {
        let longest = SessionMessage.exit(
            stream: 1, end: 0, status: nil, signal: String(repeating: "S", count: 32))
        #expect(!Self.refuses(longest.bytes))
        var tooLong = longest.bytes
        tooLong[18] = 33
        #expect(Self.refuses(tooLong + [0x53]))
        // The writer cuts a longer (ASCII) name to 32 bytes rather than writing an unparseable one.
        let cut = SessionMessage.exit(stream: 1, end: 0, status: nil, signal: String(repeating: "S", count: 40))
        #expect(try Self.parse(cut.bytes) == longest)
    }

    @Test func refusalTextIsAtMost1024Bytes() throws {
        let longest = SessionMessage.refused(stream: 1, reason: .other, text: String(repeating: "t", count: 1024))
        #expect(!Self.refuses(longest.bytes))
        let over: [UInt8] = [0x0B, 0, 0, 0, 1, 255, 0x04, 0x01] + [UInt8](repeating: 0x74, count: 1025)
        #expect(Self.refuses(over))
        let huge: [UInt8] = [0x0B, 0, 0, 0, 1, 255, 0xFF, 0xFF] + [UInt8](repeating: 0x74, count: 65535)
        #expect(Self.refuses(huge))
        // The writer cuts a longer (ASCII) text to 1024 bytes.
        let cut = SessionMessage.refused(stream: 1, reason: .other, text: String(repeating: "t", count: 5000))
        #expect(try Self.parse(cut.bytes) == longest)
    }

    // MARK: - FrameBudget

    @Test func theHomeRoadsBudgetNeverWaits() {
        var budget = FrameBudget.unlimited
        for tick in 0..<10_000 {
            #expect(budget.wait(now: Double(tick) * 1e-9) == 0)
            let took = budget.take(now: Double(tick) * 1e-9)
            #expect(took)
        }
    }

    @Test func aFullBucketGivesItsBurstAtOnceThenRefuses() {
        // Times that are exact in binary, so the arithmetic is exact too.
        var budget = FrameBudget(rate: 8, burst: 3)
        #expect(budget.wait(now: 50) == 0)
        for _ in 0..<3 { #expect(budget.take(now: 50) == true) }
        #expect(budget.take(now: 50) == false)
        #expect(budget.wait(now: 50) == 0.125)
        #expect(budget.take(now: 50.0625) == false)
        #expect(budget.wait(now: 50.0625) == 0.0625)
        #expect(budget.take(now: 50.125) == true)
        #expect(budget.take(now: 50.125) == false)
        // A long rest refills only to the burst.
        for _ in 0..<3 { #expect(budget.take(now: 5000) == true) }
        #expect(budget.take(now: 5000) == false)

        for start in [FrameBudget.computer, FrameBudget.device] {
            var budget = start
            for _ in 0..<Int(start.burst) { #expect(budget.take(now: 7) == true) }
            #expect(budget.take(now: 7) == false)
            #expect(abs(budget.wait(now: 7) - 1 / start.rate) < 1e-12)
        }
    }

    /// Takes greedily on a clock that moves in small, uneven steps; the times of the frames.
    static func greedy(_ start: FrameBudget, from origin: Double, seconds: Double, seed: UInt64) -> [Double] {
        var budget = start
        var state = seed
        var times: [Double] = []
        var elapsed = 0.0
        while elapsed < seconds {
            let now = origin + elapsed
            while budget.take(now: now) { times.append(now) }
            // 0.01 ms to 0.5 ms, from a fixed linear congruential sequence.
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            elapsed += 0.000_01 + Double(state >> 40) / Double(1 << 24) * 0.000_49
        }
        return times
    }

    /// The most frames in any closed interval of `length` seconds (checked from every frame).
    static func busiest(_ times: [Double], length: Double) -> Int {
        var most = 0
        var last = 0
        for first in times.indices {
            if last < first { last = first }
            while last + 1 < times.count, times[last + 1] <= times[first] + length { last += 1 }
            most = max(most, last - first + 1)
        }
        return most
    }

    @Test(arguments: [(460.0, 4.0), (24, 4), (10, 3), (1, 1), (100, 20)])
    func noSecondGetsMoreThanRatePlusBurst(rate: Double, burst: Double) {
        let times = Self.greedy(FrameBudget(rate: rate, burst: burst), from: 12_345.678, seconds: 4, seed: 7)
        let most = Self.busiest(times, length: 1)
        #expect(most <= Int(rate + burst))
        #expect(most >= Int(rate + burst) - 1, "the greedy taker reaches the bound: \(most)")
        #expect(times.count >= Int(burst + 3.9 * rate), "it took all it could over 4 s: \(times.count)")
    }

    @Test func bothSidesTogetherStayUnderTheRelaysLimit() {
        let computer = FrameBudget.computer
        let device = FrameBudget.device
        #expect(computer.rate == 456 && computer.burst == 2)
        #expect(device.rate == 32 && device.burst == 2)
        #expect(computer.rate + computer.burst + device.rate + device.burst == 492)
        #expect(computer.rate + computer.burst + device.rate + device.burst <= 500)

        let origin = 777.125
        let both =
            (Self.greedy(computer, from: origin, seconds: 10, seed: 1)
            + Self.greedy(device, from: origin, seconds: 10, seed: 99)).sorted()
        #expect(both.count > 4800, "both took greedily: \(both.count)")
        let sliding = Self.busiest(both, length: 1)
        #expect(sliding <= 492 && sliding >= 480, "\(sliding)")
        var windows = 0
        for shift in [0, 0.000_01, 0.000_3, 0.123_456, 0.5, 0.777, 0.999_99] {
            var from = origin + shift - 1
            while from < origin + 10 {
                let count = both.filter { $0 >= from && $0 < from + 1 }.count
                #expect(count <= 500)
                #expect(count <= 492, "\(count) frames in [\(from - origin), +1 s)")
                windows += 1
                from += 1
            }
        }
        #expect(windows >= 70)
    }

    // MARK: - HostOutputFlow

    static func bytes(_ range: Range<Int>) -> [UInt8] { range.map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    @Test func hostFlowSendsOnlyWhileAttachedAndWithinTheWindow() throws {
        var flow = HostOutputFlow(capacity: 1000)
        #expect(flow.produced == 0 && flow.start == 0 && flow.sent == 0 && !flow.isAttached)
        flow.append(Self.bytes(0..<250))
        #expect(flow.produced == 250 && flow.keptCount == 250 && flow.space == 750)
        #expect(flow.next(maximum: 100) == nil, "not attached")
        #expect(!flow.hasSendable)
        #expect(flow.attach(received: 0, window: 100) == true)
        #expect(flow.isAttached && flow.window == 100)
        #expect(flow.hasSendable)
        let firstChunk = flow.next(maximum: 60)
        let first = try #require(firstChunk)
        #expect(first.offset == 0 && first.data == Self.bytes(0..<60))
        let secondChunk = flow.next(maximum: 60)
        let second = try #require(secondChunk)
        #expect(second.offset == 60 && second.data == Self.bytes(60..<100))
        #expect(flow.next(maximum: 60) == nil, "the window is full")
        #expect(!flow.hasSendable)
        #expect(flow.sent == 100)
        #expect(flow.next(maximum: 0) == nil)

        #expect(flow.credit(30) == true)
        #expect(flow.start == 30 && flow.keptCount == 220 && flow.produced == 250)
        let thirdChunk = flow.next(maximum: 1000)
        let third = try #require(thirdChunk)
        #expect(third.offset == 100 && third.data == Self.bytes(100..<130))
        #expect(flow.next(maximum: 1000) == nil)

        // A stale credit is fine and changes nothing; one beyond what was sent is refused.
        #expect(flow.credit(10) == true)
        #expect(flow.start == 30)
        #expect(flow.credit(131) == false)
        #expect(flow.start == 30)
        #expect(flow.credit(130) == true)
        #expect(flow.start == 130)
        let restChunk = flow.next(maximum: 1000)
        let rest = try #require(restChunk)
        #expect(rest.offset == 130 && rest.data == Self.bytes(130..<230))
        #expect(flow.credit(230) == true)
        let lastChunk = flow.next(maximum: 1000)
        let last = try #require(lastChunk)
        #expect(last.offset == 230 && last.data == Self.bytes(230..<250))
        #expect(flow.next(maximum: 1000) == nil, "nothing left")
        #expect(!flow.hasSendable)
        #expect(flow.credit(250) && flow.keptCount == 0 && flow.space == 1000)
    }

    @Test func hostFlowResendsFromTheCreditedPointAfterADrop() throws {
        var flow = HostOutputFlow(capacity: 10_000)
        #expect(flow.attach(received: 0, window: 1000) == true)
        flow.append(Self.bytes(0..<500))
        let all = flow.next(maximum: 1000)
        #expect(all?.data.count == 500)
        #expect(flow.credit(200) == true)
        flow.detach()
        #expect(!flow.isAttached && flow.sent == 200 && flow.start == 200)
        #expect(flow.next(maximum: 1000) == nil)
        flow.append(Self.bytes(500..<600))
        #expect(flow.credit(201) == false, "nothing counts as sent while away")
        #expect(flow.credit(200) == true)

        // Back from the credited point: every unacknowledged byte again, then the new ones.
        var copy = flow
        #expect(copy.attach(received: 200, window: 1000) == true)
        let againChunk = copy.next(maximum: 10_000)
        let again = try #require(againChunk)
        #expect(again.offset == 200 && again.data == Self.bytes(200..<600))

        // Back from a later point the device says it had: from there, and what was before is gone.
        #expect(flow.attach(received: 450, window: 1000) == true)
        #expect(flow.start == 450 && flow.sent == 450 && flow.keptCount == 150)
        let laterChunk = flow.next(maximum: 10_000)
        let later = try #require(laterChunk)
        #expect(later.offset == 450 && later.data == Self.bytes(450..<600))
    }

    @Test func hostFlowAttachesOnlyWithinWhatItKeeps() {
        var flow = HostOutputFlow(capacity: 10_000)
        #expect(flow.attach(received: 0, window: 4096) == true)
        flow.append(Self.bytes(0..<300))
        _ = flow.next(maximum: 300)
        #expect(flow.credit(100) == true)
        flow.detach()
        for received: UInt64 in [0, 99, 301, 1000, .max] {
            var copy = flow
            #expect(copy.attach(received: received, window: 4096) == false, "\(received)")
            #expect(!copy.isAttached && copy.start == 100 && copy.produced == 300)
        }
        for received: UInt64 in [100, 101, 299, 300] {
            var copy = flow
            #expect(copy.attach(received: received, window: 4096) == true, "\(received)")
            #expect(copy.start == received && copy.sent == received)
        }
    }

    @Test func hostFlowGivesForgottenOutputsMemoryBack() {
        var flow = HostOutputFlow(capacity: 1 << 20)
        #expect(flow.attach(received: 0, window: 1 << 20) == true)
        let step = 64 * 1024
        let piece = [UInt8](repeating: 0x61, count: step)
        var most = 0
        func storage(_ flow: HostOutputFlow) -> Int { flow.keptStorage.total }
        for _ in 0..<(100 * 1024 * 1024 / step) {
            flow.append(piece)
            most = max(most, storage(flow))
            while let chunk = flow.next(maximum: SessionMessage.maximumData) { #expect(chunk.data.count > 0) }
            #expect(flow.keptCount == step)
            #expect(flow.credit(flow.sent) == true)
            #expect(flow.keptCount == 0)
            most = max(most, storage(flow))
        }
        #expect(flow.produced == 100 * 1024 * 1024 && flow.start == flow.produced)
        #expect(most <= 3 * step, "the bytes behind the credit are dropped, not kept: \(most)")

        // A device that lags a quarter of a mebibyte behind: what is kept stays near that.
        var lagging = HostOutputFlow(capacity: 1 << 20)
        #expect(lagging.attach(received: 0, window: 1 << 20) == true)
        most = 0
        for _ in 0..<(100 * 1024 * 1024 / step) {
            lagging.append(piece)
            most = max(most, storage(lagging))
            while lagging.next(maximum: SessionMessage.maximumData) != nil {}
            #expect(lagging.credit(lagging.sent > 256 * 1024 ? lagging.sent - 256 * 1024 : 0) == true)
            #expect(lagging.keptCount <= 256 * 1024)
            most = max(most, storage(lagging))
        }
        #expect(most <= 3 * 256 * 1024, "\(most)")
    }

    /// The resume buffer's memory follows what it keeps, in allocations glibc serves from its
    /// arenas: one buffer of megabytes would be mmapped, and freeing it would raise glibc's mmap
    /// threshold so that the next sessions' buffers stayed resident after they ended (issue 36).
    @Test func hostFlowKeepsItsOutputInSmallAllocationsThatFollowWhatIsKept() throws {
        let capacity = 8 * 1024 * 1024
        var flow = HostOutputFlow(capacity: capacity)
        #expect(flow.attach(received: 0, window: capacity) == true)
        // A terminal's writes of every size: echoes of a byte, lines, full 64 KiB reads, and
        // more than a chunk at once; every byte numbered by its offset.
        let sizes = [1, 3, 80, 4096, 65536, 65535, 2, 65536, 200_000, 1, 30_000, 40_000, 65536, 7]
        var produced = 0
        var largest = 0
        while flow.keptCount + 200_000 <= capacity {
            for size in sizes where flow.keptCount + size <= capacity {
                flow.append(Self.bytes(produced..<(produced + size)))
                produced += size
                largest = max(largest, flow.keptStorage.largest)
            }
        }
        #expect(flow.keptCount > capacity - 200_000)
        // 64 KiB and malloc's rounding: far under glibc's 128 KiB mmap threshold.
        #expect(largest <= 65 * 1024, "an allocation of \(largest) bytes")
        let kept = flow.keptStorage.total
        #expect(kept <= flow.keptCount * 2 + 64 * 1024, "\(kept) bytes hold \(flow.keptCount)")

        // Sent in full-size messages across the chunks' boundaries, every byte in its place.
        var sent = 0
        while let chunk = flow.next(maximum: SessionMessage.maximumData) {
            #expect(chunk.offset == UInt64(sent))
            #expect(chunk.data == Self.bytes(sent..<(sent + chunk.data.count)))
            sent += chunk.data.count
        }
        #expect(sent == produced)

        // Credited part of the way (inside a chunk), then resumed from there: the rest again.
        #expect(flow.credit(UInt64(produced / 3)) == true)
        #expect(flow.keptStorage.total <= kept - produced / 3 + 64 * 1024)
        flow.detach()
        #expect(flow.attach(received: UInt64(produced / 3 + 5), window: capacity) == true)
        let againChunk = flow.next(maximum: 1000)
        let again = try #require(againChunk)
        #expect(again.offset == UInt64(produced / 3 + 5))
        #expect(again.data == Self.bytes((produced / 3 + 5)..<(produced / 3 + 1005)))

        // Everything credited: nothing is held.
        while flow.next(maximum: SessionMessage.maximumData) != nil {}
        #expect(flow.credit(UInt64(produced)) == true)
        #expect(flow.keptCount == 0 && flow.keptStorage.total == 0)
    }

    // MARK: - DeviceOutputFlow

    @Test func deviceFlowDropsDuplicatesAndCallsAGapBroken() throws {
        var flow = DeviceOutputFlow(window: 4096)
        #expect(flow.receive(offset: 0, data: [1, 2, 3]) == [1, 2, 3])
        #expect(flow.received == 3)
        #expect(flow.receive(offset: 0, data: [1, 2, 3]) == [], "a duplicate")
        #expect(flow.receive(offset: 1, data: [2]) == [])
        #expect(flow.receive(offset: 2, data: [3, 4, 5]) == [4, 5], "only the new part of an overlap")
        #expect(flow.received == 5)
        #expect(flow.receive(offset: 5, data: []) == [])
        #expect(flow.receive(offset: 6, data: [7]) == nil, "byte 5 never came")
        #expect(flow.received == 5)
        #expect(flow.receive(offset: 5, data: [6]) == [6])

        var later = DeviceOutputFlow(window: 4096, from: 1000)
        #expect(later.received == 1000 && later.consumed == 1000 && later.credited == 1000)
        #expect(later.receive(offset: 0, data: []) == [])
        #expect(later.receive(offset: 999, data: [9, 10]) == [10])
        #expect(later.receive(offset: 1002, data: [1]) == nil)
    }

    @Test func deviceFlowCreditsEveryQuarterWindow() {
        var flow = DeviceOutputFlow(window: 16384)
        #expect(flow.consumed(4095) == nil)
        #expect(flow.consumed(1) == 4096)
        #expect(flow.credited == 4096)
        #expect(flow.consumed(4096) == 8192)
        #expect(flow.consumed(100) == nil)
        #expect(flow.consumed(5000) == 13292)
        #expect(flow.consumed(4095) == nil)
        #expect(flow.consumed == 17387 && flow.credited == 13292)

        var resumed = DeviceOutputFlow(window: 4096, from: 500)
        #expect(resumed.consumed(1023) == nil)
        #expect(resumed.consumed(1) == 1524)
    }

    // MARK: - DeviceSession

    @Test func aSessionOpensThenResumesFromTheLastByteAndDropsDuplicates() throws {
        var session = DeviceSession(name: "work", window: 16384)
        #expect(
            session.attachMessage(cols: 80, rows: 24)
                == .open(stream: 1, name: "work", cols: 80, rows: 24, window: 16384))
        #expect(
            session.receive(.output(stream: 1, offset: 0, data: [1]))
                == .broken("output came before the session started"))
        #expect(session.receive(.started(stream: 1, token: Self.token, offset: 0, window: 4096)) == .started(.first))
        #expect(session.token == Self.token && session.hasStarted)
        #expect(
            session.receive(.started(stream: 1, token: Self.token, offset: 0, window: 4096)).isBroken, "started twice")
        #expect(
            session.receive(.output(stream: 1, offset: 0, data: Array("hello".utf8))) == .output(Array("hello".utf8)))
        #expect(
            session.receive(.output(stream: 1, offset: 5, data: Array(" world".utf8))) == .output(Array(" world".utf8)))

        // The link drops; the next connection resumes from byte 11.
        #expect(
            session.attachMessage(cols: 100, rows: 30)
                == .resume(stream: 2, token: Self.token, received: 11, cols: 100, rows: 30, window: 16384))
        #expect(session.receive(.output(stream: 1, offset: 11, data: [1])) == .none, "the old stream is left")
        #expect(session.receive(.output(stream: 2, offset: 11, data: [1])).isBroken, "before started")
        #expect(session.receive(.started(stream: 2, token: Self.token, offset: 11, window: 4096)) == .started(.resumed))
        #expect(session.receive(.output(stream: 2, offset: 6, data: Array("world".utf8))) == .none, "a duplicate")
        #expect(session.receive(.output(stream: 2, offset: 9, data: Array("ld!".utf8))) == .output(Array("!".utf8)))
        #expect(session.flow.received == 12)
        #expect(session.receive(.output(stream: 2, offset: 13, data: [0])).isBroken, "byte 12 is missing")
    }

    @Test func startedOffsetsAreChecked() {
        var fresh = DeviceSession(name: nil, window: 4096)
        _ = fresh.attachMessage(cols: 80, rows: 24)
        #expect(fresh.receive(.started(stream: 1, token: Self.token, offset: 5, window: 4096)).isBroken)
        #expect(!fresh.hasStarted && fresh.token == nil)
        #expect(fresh.receive(.started(stream: 1, token: Self.token, offset: 0, window: 4096)) == .started(.first))

        var resuming = DeviceSession(name: nil, window: 4096)
        _ = resuming.attachMessage(cols: 80, rows: 24)
        _ = resuming.receive(.started(stream: 1, token: Self.token, offset: 0, window: 4096))
        _ = resuming.receive(.output(stream: 1, offset: 0, data: [UInt8](repeating: 1, count: 100)))
        _ = resuming.attachMessage(cols: 80, rows: 24)
        for offset: UInt64 in [0, 99, 101] {
            #expect(
                resuming.receive(.started(stream: 2, token: Self.token, offset: offset, window: 4096)).isBroken,
                "\(offset)")
        }
        #expect(
            resuming.receive(.started(stream: 2, token: Self.token, offset: 100, window: 4096)) == .started(.resumed))
        #expect(
            resuming.receive(.started(stream: 3, token: Self.token, offset: 100, window: 4096)) == .none,
            "not its stream")
    }

    @Test func anExitMustEndWhereTheOutputEnded() {
        var session = DeviceSession(name: nil, window: 4096)
        _ = session.attachMessage(cols: 80, rows: 24)
        _ = session.receive(.started(stream: 1, token: Self.token, offset: 0, window: 4096))
        _ = session.receive(.output(stream: 1, offset: 0, data: [1, 2, 3]))
        var early = session
        #expect(early.receive(.exit(stream: 1, end: 2, status: 0, signal: nil)).isBroken)
        var late = session
        #expect(late.receive(.exit(stream: 1, end: 4, status: 0, signal: nil)).isBroken)
        #expect(session.receive(.exit(stream: 1, end: 3, status: 7, signal: nil)) == .exited(status: 7, signal: nil))
        var signalled = DeviceSession(name: nil, window: 4096)
        _ = signalled.attachMessage(cols: 80, rows: 24)
        _ = signalled.receive(.started(stream: 1, token: Self.token, offset: 0, window: 4096))
        #expect(
            signalled.receive(.exit(stream: 1, end: 0, status: nil, signal: "HUP"))
                == .exited(status: nil, signal: "HUP"))
    }

    @Test func aLostSessionIsOpenedAfreshFromAFreshCount() throws {
        for reason in [SessionRefusal.unknownSession, .resumePointLost] {
            var session = DeviceSession(name: "work", window: 4096)
            _ = session.attachMessage(cols: 80, rows: 24)
            _ = session.receive(.started(stream: 1, token: Self.token, offset: 0, window: 4096))
            _ = session.receive(.output(stream: 1, offset: 0, data: [UInt8](repeating: 1, count: 500)))
            _ = session.consumed(500)
            #expect(session.attachMessage(cols: 80, rows: 24).isResume)
            #expect(session.receive(.refused(stream: 2, reason: reason, text: "gone")) == .attachAfresh(text: "gone"))
            #expect(session.token == nil && session.flow.received == 0 && session.flow.consumed == 0)
            #expect(
                session.attachMessage(cols: 90, rows: 20)
                    == .open(stream: 3, name: "work", cols: 90, rows: 20, window: 4096))
            #expect(
                session.receive(.started(stream: 3, token: Self.otherToken, offset: 500, window: 4096)).isBroken,
                "a new count")
            #expect(
                session.receive(.started(stream: 3, token: Self.otherToken, offset: 0, window: 4096))
                    == .started(.afresh))
            #expect(session.receive(.output(stream: 3, offset: 0, data: [9])) == .output([9]))
            #expect(session.attachMessage(cols: 90, rows: 20).isResume)
        }
    }

    @Test func otherRefusalsAreFinal() {
        var opening = DeviceSession(name: nil, window: 4096)
        _ = opening.attachMessage(cols: 80, rows: 24)
        #expect(
            opening.receive(.refused(stream: 1, reason: .unknownSession, text: "x"))
                == .refused(.unknownSession, text: "x"),
            "nothing to resume while opening")
        var resuming = DeviceSession(name: nil, window: 4096)
        _ = resuming.attachMessage(cols: 80, rows: 24)
        _ = resuming.receive(.started(stream: 1, token: Self.token, offset: 0, window: 4096))
        _ = resuming.attachMessage(cols: 80, rows: 24)
        var full = resuming
        #expect(
            full.receive(.refused(stream: 2, reason: .tooManySessions, text: "t"))
                == .refused(.tooManySessions, text: "t"))
        #expect(full.token == Self.token)
        #expect(resuming.receive(.refused(stream: 1, reason: .unknownSession, text: "old")) == .none)
    }

    @Test func aDeviceOnlyMessageFromTheComputerIsBroken() {
        let wrong: [SessionMessage] = [
            .open(stream: 1, name: nil, cols: 80, rows: 24, window: 4096),
            .resume(stream: 1, token: Self.token, received: 0, cols: 80, rows: 24, window: 4096),
            .input(stream: 1, data: [1]), .resize(stream: 1, cols: 80, rows: 24), .credit(stream: 1, consumed: 0),
            .endOfInput(stream: 1), .close(stream: 1),
        ]
        for message in wrong {
            var session = DeviceSession(name: nil, window: 4096)
            _ = session.attachMessage(cols: 80, rows: 24)
            #expect(session.receive(message).isBroken, "\(message)")
        }
    }

    @Test func theDeviceCreditsEveryQuarterWindow() {
        var session = DeviceSession(name: nil, window: 64 * 1024)
        _ = session.attachMessage(cols: 80, rows: 24)
        _ = session.receive(.started(stream: 1, token: Self.token, offset: 0, window: 64 * 1024))
        var credits: [UInt64] = []
        for _ in 0..<64 {
            _ = session.receive(
                .output(stream: 1, offset: session.flow.received, data: [UInt8](repeating: 0, count: 1024)))
            if let credit = session.consumed(1024) { credits.append(credit) }
        }
        #expect(credits == [16384, 32768, 49152, 65536])

        // A computer keeping to a smaller window gets credits every quarter of its window.
        var smaller = DeviceSession(name: nil, window: 64 * 1024)
        _ = smaller.attachMessage(cols: 80, rows: 24)
        _ = smaller.receive(.started(stream: 1, token: Self.token, offset: 0, window: 8192))
        _ = smaller.receive(.output(stream: 1, offset: 0, data: [UInt8](repeating: 0, count: 2048)))
        #expect(smaller.consumed(2048) == 2048)
        var greedy = DeviceSession(name: nil, window: 8192)
        _ = greedy.attachMessage(cols: 80, rows: 24)
        #expect(
            greedy.receive(.started(stream: 1, token: Self.token, offset: 0, window: 16384)).isBroken, "more than asked"
        )
    }

    @Test func textsAreCutAtACharacterBoundary() throws {
        let refusal = SessionMessage.refused(
            stream: 1, reason: .startFailed, text: String(repeating: "a", count: 1023) + "é")
        guard case .refused(_, _, let text) = try SessionMessage(parsing: refusal.bytes) else {
            Issue.record("not a refusal")
            return
        }
        #expect(text == String(repeating: "a", count: 1023))
        let exit = SessionMessage.exit(stream: 1, end: 0, status: nil, signal: String(repeating: "S", count: 31) + "é")
        guard case .exit(_, _, _, let signal) = try SessionMessage(parsing: exit.bytes) else {
            Issue.record("not an exit")
            return
        }
        #expect(signal == String(repeating: "S", count: 31))
    }
}

extension DeviceSession.Outcome {
    var isBroken: Bool { if case .broken = self { true } else { false } }
}

extension SessionMessage {
    var isResume: Bool { if case .resume = self { true } else { false } }
}
