import Testing

@testable import HerdrWatch

@Suite struct HerdrLineReaderTests {
    static func lines(_ chunks: [[UInt8]], maximum: Int = 64) -> (lines: [[UInt8]], error: HerdrLineError?) {
        var reader = HerdrLineReader(maximumLineBytes: maximum)
        var lines: [[UInt8]] = []
        do {
            for chunk in chunks {
                reader.append(chunk)
                while let line = try reader.next() { lines.append(line) }
            }
        } catch {
            return (lines, error)
        }
        return (lines, nil)
    }

    @Test func linesComeOutTheSameHoweverTheBytesAreCut() {
        let text = Array("{\"id\":\"1\"}\n\n{\"event\":\"x\"}\nrest".utf8)
        let whole = Self.lines([text])
        #expect(whole.lines.map { String(decoding: $0, as: UTF8.self) } == ["{\"id\":\"1\"}", "", "{\"event\":\"x\"}"])
        #expect(whole.error == nil)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var chunks: [[UInt8]] = []
            var index = 0
            while index < text.count {
                let size = Int.random(in: 1...7, using: &generator)
                chunks.append(Array(text[index..<min(text.count, index + size)]))
                index += size
            }
            #expect(Self.lines(chunks).lines == whole.lines)
        }
    }

    @Test func aLineAtTheBoundIsReadAndOnePastItEndsTheReader() {
        let atBound = [UInt8](repeating: 0x61, count: 64) + [0x0A]
        #expect(Self.lines([atBound]).lines == [Array(atBound.dropLast())])
        let past = [UInt8](repeating: 0x61, count: 65) + [0x0A] + Array("{}\n".utf8)
        let read = Self.lines([past])
        #expect(read.lines.isEmpty)
        #expect(read.error?.description == "a line of more than 64 bytes")
    }

    @Test func aLineWithoutANewlineFailsOnceItPassesTheBoundAndKeepsNothing() {
        var reader = HerdrLineReader(maximumLineBytes: 64)
        reader.append([UInt8](repeating: 0x61, count: 40))
        #expect((try? reader.next()) == .some(nil))
        reader.append([UInt8](repeating: 0x61, count: 40))
        #expect(throws: HerdrLineError.self) { try reader.next() }
        #expect(reader.pendingCount == 0)
        reader.append(Array("{}\n".utf8))
        #expect(throws: HerdrLineError.self) { try reader.next() }
    }

    @Test func theDefaultBoundIsHerdrsLongestLine() {
        #expect(HerdrLineReader().maximumLineBytes == 8 * 1024 * 1024)
        #expect(HerdrLineError(maximumLineBytes: 8 << 20).description == "a line of more than 8 MiB")
    }
}
