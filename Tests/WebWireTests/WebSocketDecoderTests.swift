import Testing

@testable import WebWire

/// The decoder's events, streaming binary (and text): the same messages as the same decoder read a
/// message at a time (binary ones rebuilt from the streamed pieces) and the same first error,
/// whatever the chunking.
struct WebSocketDecoderTests {
    /// Runs the decoder over `bytes` cut into chunks; streamed messages are rebuilt.
    static func streamDecode(
        _ bytes: [UInt8], role: WebSocketRole, maximumMessageSize: Int = 1 << 20, streamsText: Bool = false,
        chunks: inout SeededGenerator, largestChunk: Int
    ) -> (messages: [WebSocketMessage], error: WebSocketProtocolError?) {
        let decoder = WebSocketDecoder(
            role: role, maximumMessageSize: maximumMessageSize, streaming: streamsText ? .binaryAndText : .binary)
        var messages: [WebSocketMessage] = []
        var binary: [UInt8] = []
        var messageIsText = false
        var frameFin = false
        var inFrame = false
        var start = 0
        do {
            while start < bytes.count {
                let end = min(bytes.count, start + Int.random(in: 1...largestChunk, using: &chunks))
                var chunk = Array(bytes[start..<end])
                start = end
                _ = try chunk.withUnsafeMutableBytes { buffer in
                    try decoder.decode(buffer) { event in
                        switch event {
                        case .dataFrameStart(let opcode, let fin, _):
                            #expect(!inFrame)
                            #expect(streamsText || opcode != .text)
                            if opcode != .continuation { messageIsText = opcode == .text }
                            inFrame = true
                            frameFin = fin
                        case .dataPayload(let payload):
                            #expect(inFrame)
                            binary.append(contentsOf: payload)
                        case .dataFrameEnd:
                            inFrame = false
                            if frameFin {
                                messages.append(
                                    messageIsText ? .text(String(decoding: binary, as: UTF8.self)) : .binary(binary))
                                binary = []
                            }
                        case .message(let message):
                            messages.append(message)
                        }
                        return true
                    }
                }
            }
        } catch let error as WebSocketProtocolError {
            return (messages, error)
        } catch {
            Issue.record("unexpected error \(error)")
        }
        return (messages, nil)
    }

    @Test(arguments: [WebSocketRole.server, .client], [false, true])
    func randomChunkingsMatchTheAssemblingDecoder(role: WebSocketRole, streamsText: Bool) throws {
        let (bytes, expected) = WebSocketStreamTests.mixedStream(role: role)
        var random = SeededGenerator(seed: 11)
        for largest in [1, 7, 300, 20_000, 1 << 20] {
            let result = Self.streamDecode(
                bytes, role: role, streamsText: streamsText, chunks: &random, largestChunk: largest)
            #expect(result.error == nil)
            #expect(result.messages == expected, "chunks up to \(largest) bytes")
        }
    }

    @Test func payloadIsUnmaskedInPlaceWithNoCopyOfTheFrame() throws {
        let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var bytes = frame(.binary, payload, to: .server)
        let decoder = WebSocketDecoder(role: .server, maximumMessageSize: 4096, streaming: .binary)
        var pieces: [UnsafeRawBufferPointer] = []
        _ = try bytes.withUnsafeMutableBytes { buffer in
            try decoder.decode(buffer) { event in
                if case .dataPayload(let chunk) = event {
                    // The chunk lies inside the caller's buffer.
                    #expect(chunk.baseAddress! >= UnsafeRawPointer(buffer.baseAddress!))
                    pieces.append(chunk)
                }
                return true
            }
        }
        #expect(pieces.count == 1)
        #expect(Array(bytes.suffix(1000)) == payload)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func frameLimitRaisedByTheHandlerAppliesToTheNextHeader() throws {
        var bytes =
            frame(.text, Array("admit me".utf8), to: .server)
            + frame(.binary, [UInt8](repeating: 1, count: 5000), to: .server)
        let decoder = WebSocketDecoder(role: .server, maximumMessageSize: 100, streaming: .binary)
        var binaryBytes = 0
        _ = try bytes.withUnsafeMutableBytes { buffer in
            try decoder.decode(buffer) { event in
                switch event {
                case .message(.text): decoder.maximumMessageSize = 8192
                case .dataPayload(let chunk): binaryBytes += chunk.count
                default: break
                }
                return true
            }
        }
        #expect(binaryBytes == 5000)
    }

    @Test func overSizeBinaryFrameFailsFromItsHeaderAlone() {
        let full = frame(.binary, [UInt8](repeating: 0, count: 257), to: .server)
        var header = Array(full.prefix(8))  // 2 + 2 length bytes + 4 mask bytes
        let decoder = WebSocketDecoder(role: .server, maximumMessageSize: 256, streaming: .binary)
        #expect(throws: WebSocketProtocolError(closeCode: 1009, reason: "frame too large")) {
            try header.withUnsafeMutableBytes { buffer in try decoder.decode(buffer) { _ in true } }
        }
    }

    @Test func handlerStopsDecoding() throws {
        let one = frame(.text, Array("one".utf8), to: .server)
        var bytes = one + frame(.text, Array("two".utf8), to: .server)
        let decoder = WebSocketDecoder(role: .server, maximumMessageSize: 100, streaming: .binary)
        var seen: [WebSocketMessage] = []
        let used = try bytes.withUnsafeMutableBytes { buffer in
            try decoder.decode(buffer) { event in
                if case .message(let message) = event { seen.append(message) }
                return false
            }
        }
        #expect(seen == [.text("one")])
        // The rest decodes from the first byte not used.
        #expect(used == one.count)
        _ = try bytes.withUnsafeMutableBytes { buffer in
            try decoder.decode(UnsafeMutableRawBufferPointer(rebasing: buffer[used...])) { event in
                if case .message(let message) = event { seen.append(message) }
                return true
            }
        }
        #expect(seen == [.text("one"), .text("two")])
    }

    /// Stopping after every event and resuming with the bytes not used gives the same events as
    /// one pass, for any chunking: the message reader stops this way at every message.
    @Test(arguments: [WebSocketDecoder.Streaming.none, .binary, .binaryAndText])
    func stoppingAfterEveryEventResumesWhereItStopped(streaming: WebSocketDecoder.Streaming) throws {
        func events(_ bytes: [UInt8], stopping: Bool, largestChunk: Int) throws -> [String] {
            let decoder = WebSocketDecoder(role: .server, maximumMessageSize: 1 << 20, streaming: streaming)
            var random = SeededGenerator(seed: 21)
            var seen: [String] = []
            var payload: [UInt8] = []
            var wire = bytes
            var start = 0
            try wire.withUnsafeMutableBytes { all in
                while start < all.count {
                    let end = min(all.count, start + Int.random(in: 1...largestChunk, using: &random))
                    var chunk = UnsafeMutableRawBufferPointer(rebasing: all[start..<end])
                    while true {
                        var stopped = false
                        let used = try decoder.decode(chunk) { event in
                            stopped = stopping
                            switch event {
                            case .dataFrameStart(let opcode, let fin, let length):
                                seen.append("start \(opcode) \(fin) \(length)")
                            // Pieces joined: chunking may cut the payload differently.
                            case .dataPayload(let piece): payload += piece
                            case .dataFrameEnd:
                                seen.append("payload \(payload) end")
                                payload = []
                            case .message(let message): seen.append("message \(message)")
                            }
                            return !stopping
                        }
                        #expect(stopped || used == chunk.count)
                        // A stop is resumed by calling again with the bytes not used, even none.
                        if !stopped { break }
                        chunk = UnsafeMutableRawBufferPointer(rebasing: chunk[used...])
                    }
                    start = end
                }
            }
            return seen
        }
        // Ending with a streamed frame: after the stop at its last payload, its end is still owed.
        let bytes = WebSocketStreamTests.mixedStream(role: .server).bytes + frame(.binary, [1, 2, 3], to: .server)
        let expected = try events(bytes, stopping: false, largestChunk: bytes.count)
        #expect(expected.count >= 10)
        for largest in [1, 5, 300, bytes.count] {
            #expect(try events(bytes, stopping: true, largestChunk: largest) == expected, "chunks up to \(largest)")
        }
    }

    /// A relay streams text too once the socket is admitted: the change applies from the next message.
    @Test func streamingChangedByTheHandlerAppliesToTheNextMessage() throws {
        var bytes =
            frame(.text, Array("admit me".utf8), to: .server) + frame(.text, Array("ok".utf8), to: .server)
        let decoder = WebSocketDecoder(role: .server, maximumMessageSize: 100, streaming: .binary)
        var seen: [String] = []
        _ = try bytes.withUnsafeMutableBytes { buffer in
            try decoder.decode(buffer) { event in
                switch event {
                case .message(let message):
                    seen.append("\(message)")
                    decoder.streaming = .binaryAndText
                case .dataFrameStart(let opcode, _, _): seen.append("start \(opcode)")
                case .dataPayload(let payload): seen.append(String(decoding: payload, as: UTF8.self))
                case .dataFrameEnd: seen.append("end")
                }
                return true
            }
        }
        #expect(seen == ["\(WebSocketMessage.text("admit me"))", "start text", "ok", "end"])
    }

    /// Noise and mutated streams: the events and the message reader end with the same messages
    /// and the same error. Streaming text, a bad character is refused where it is met, before the
    /// message ends: the messages still agree, and every stream the reader refuses is refused too.
    @Test(arguments: [false, true])
    func fuzzAgreesWithTheAssemblingDecoder(streamsText: Bool) {
        var random = SeededGenerator(seed: 0xC0FFEE)
        let valid = WebSocketStreamTests.mixedStream(role: .server).bytes.prefix(600)
        var disagreements = 0
        for round in 0..<2000 {
            let role: WebSocketRole = round % 2 == 0 ? .server : .client
            var input: [UInt8]
            if round % 4 < 2 {
                input = random.bytes(Int.random(in: 0...64, using: &random))
            } else {
                input = Array(valid.prefix(Int.random(in: 0...valid.count, using: &random)))
                for _ in 0..<Int.random(in: 1...4, using: &random) where !input.isEmpty {
                    input[Int.random(in: 0..<input.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            let limit = Int.random(in: 0...512, using: &random)
            var reference = WebSocketMessageReader(role: role, maximumMessageSize: limit)
            reference.append(input)
            var expected: [WebSocketMessage] = []
            var expectedError: WebSocketProtocolError?
            do {
                while let message = try reference.next() { expected.append(message) }
            } catch {
                expectedError = error
            }
            let got = Self.streamDecode(
                input, role: role, maximumMessageSize: limit, streamsText: streamsText, chunks: &random,
                largestChunk: 32)
            let errorsAgree = streamsText ? (expectedError == nil || got.error != nil) : got.error == expectedError
            if got.messages != expected || !errorsAgree { disagreements += 1 }
        }
        #expect(disagreements == 0)
    }

    /// Streamed text is checked as it passes: every way UTF-8 can be wrong is refused with 1007,
    /// a character split across chunks, frames and fragments is not, and a message may not end
    /// inside a character.
    @Test func streamedTextIsCheckedForUTF8AcrossChunksAndFragments() throws {
        let invalid: [[UInt8]] = [
            [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
            [0x80], [0xC2, 0x41], [0xFF],
        ]
        for bad in invalid {
            var random = SeededGenerator(seed: 5)
            let bytes = frame(.text, Array("ok ".utf8) + bad + Array(" more".utf8), to: .server)
            let result = Self.streamDecode(bytes, role: .server, streamsText: true, chunks: &random, largestChunk: 2)
            #expect(result.error?.closeCode == 1007, "\(bad)")
        }
        // A message that ends half-way through a character.
        var random = SeededGenerator(seed: 6)
        let truncated = frame(.text, [0x61, 0xE2, 0x82], to: .server)
        #expect(
            Self.streamDecode(truncated, role: .server, streamsText: true, chunks: &random, largestChunk: 1).error?
                .closeCode == 1007)
        // "€" (E2 82 AC) and "𝄞" (F0 9D 84 9E) split across two fragments, one byte at a time.
        let text = "a€𝄞z"
        let utf8 = Array(text.utf8)
        let split =
            frame(.text, Array(utf8[0..<3]), fin: false, to: .server)
            + frame(.continuation, Array(utf8[3...]), to: .server)
        let result = Self.streamDecode(split, role: .server, streamsText: true, chunks: &random, largestChunk: 1)
        #expect(result.error == nil)
        #expect(result.messages == [.text(text)])
    }
}
