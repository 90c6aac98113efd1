import Testing
import WebWire

/// The encoder and decoder together: round trips, arbitrary chunking, and random input.
@Suite struct WebSocketStreamTests {
    static let sizes = [0, 1, 125, 126, 127, 65535, 65536, 300_000]

    @Test(arguments: sizes)
    func roundTrip(size: Int) throws {
        var random = SeededGenerator(seed: UInt64(size))
        let payload = random.bytes(size)
        for role in [WebSocketRole.server, .client] {
            let key: UInt32? = role == .server ? UInt32.random(in: 0...UInt32.max, using: &random) : nil
            let bytes = WebSocketFrameEncoder.frame(.binary, payload, maskKey: key)
            let lengthBytes = size < 126 ? 0 : size <= 0xFFFF ? 2 : 8
            #expect(bytes.count == 2 + lengthBytes + (key == nil ? 0 : 4) + size)
            #expect(try decodeAll(bytes, role: role, maximumMessageSize: size) == [.binary(payload)])
        }
    }

    @Test func encoderMatchesRFCExamples() {
        #expect(WebSocketFrameEncoder.text("Hello", maskKey: nil) == hex("81 05 48 65 6c 6c 6f"))
        #expect(WebSocketFrameEncoder.text("Hello", maskKey: 0x37FA_213D) == hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"))
        #expect(
            WebSocketFrameEncoder.frame(.text, Array("Hel".utf8), fin: false, maskKey: nil) == hex("01 03 48 65 6c"))
        #expect(WebSocketFrameEncoder.frame(.continuation, Array("lo".utf8), maskKey: nil) == hex("80 02 6c 6f"))
        #expect(WebSocketFrameEncoder.frame(.ping, Array("Hello".utf8), maskKey: nil) == hex("89 05 48 65 6c 6c 6f"))
        #expect(
            Array(WebSocketFrameEncoder.frame(.binary, [UInt8](repeating: 0, count: 256), maskKey: nil).prefix(4))
                == hex("82 7e 01 00"))
        #expect(
            Array(WebSocketFrameEncoder.frame(.binary, [UInt8](repeating: 0, count: 65536), maskKey: nil).prefix(10))
                == hex("82 7f 00 00 00 00 00 01 00 00"))
    }

    @Test func maskingEveryLengthAndPhase() throws {
        // Lengths around the 8- and 32-byte strides, decoded in chunks that start at every mask phase.
        var random = SeededGenerator(seed: 99)
        for size in 0...70 {
            let payload = random.bytes(size)
            let bytes = WebSocketFrameEncoder.frame(.binary, payload, maskKey: 0x0102_0304)
            for chunk in 1...9 {
                var decoder = WebSocketMessageReader(role: .server, maximumMessageSize: 100)
                var messages: [WebSocketMessage] = []
                for start in stride(from: 0, to: bytes.count, by: chunk) {
                    decoder.append(Array(bytes[start..<min(start + chunk, bytes.count)]))
                    while let message = try decoder.next() { messages.append(message) }
                }
                #expect(messages == [.binary(payload)])
            }
        }
    }

    @Test func closeFrameReasonIsCutOnACharacterBoundary() throws {
        let reason = String(repeating: "€", count: 50)  // 150 bytes
        let bytes = WebSocketFrameEncoder.closeFrame(code: 1001, reason: reason, maskKey: nil)
        #expect(bytes.count == 2 + 2 + 123)
        #expect(try decodeAll(bytes, role: .client) == [.close(code: 1001, reason: String(repeating: "€", count: 41))])
        let short = WebSocketFrameEncoder.closeFrame(code: 1000, reason: "ok", maskKey: 5)
        #expect(try decodeAll(short, role: .server) == [.close(code: 1000, reason: "ok")])
        let fits = String(repeating: "a", count: 122) + "é"  // 124 bytes: the é goes
        let cut = WebSocketFrameEncoder.closeFrame(code: 1000, reason: fits, maskKey: nil)
        #expect(try decodeAll(cut, role: .client) == [.close(code: 1000, reason: String(repeating: "a", count: 122))])
    }

    /// A stream of everything: single frames, fragments with pings between them, a character
    /// split across fragments, a large fragmented message, a close.
    static func mixedStream(role: WebSocketRole) -> (bytes: [UInt8], messages: [WebSocketMessage]) {
        var random = SeededGenerator(seed: 7)
        let big = random.bytes(70_000)
        let medium = random.bytes(300)
        func f(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
            frame(opcode, payload, fin: fin, to: role, maskKey: UInt32.random(in: 0...UInt32.max, using: &random))
        }
        var bytes = f(.text, Array("Hello".utf8))
        bytes += f(.binary, [1, 2, 3], fin: false) + f(.ping, [9]) + f(.continuation, [4], fin: false)
        bytes += f(.pong, []) + f(.continuation, [5, 6])
        bytes += f(.text, [])
        bytes += f(.text, [0xF0, 0x9D], fin: false) + f(.continuation, [0x84, 0x9E, 0x21])
        bytes += f(.binary, medium)
        bytes += f(.binary, Array(big[..<1]), fin: false) + f(.continuation, Array(big[1..<65_537]), fin: false)
        bytes += f(.ping, Array("mid".utf8)) + f(.continuation, Array(big[65_537...]))
        bytes += f(.close, [0x03, 0xE8] + Array("done".utf8))
        let messages: [WebSocketMessage] = [
            .text("Hello"), .ping([9]), .pong([]), .binary([1, 2, 3, 4, 5, 6]), .text(""), .text("𝄞!"),
            .binary(medium), .ping(Array("mid".utf8)), .binary(big), .close(code: 1000, reason: "done"),
        ]
        return (bytes, messages)
    }

    @Test(arguments: [WebSocketRole.server, .client])
    func byteAtATimeMatchesOneShot(role: WebSocketRole) throws {
        let (bytes, expected) = Self.mixedStream(role: role)
        #expect(try decodeAll(bytes, role: role) == expected)
        var decoder = WebSocketMessageReader(role: role, maximumMessageSize: 1 << 20)
        var messages: [WebSocketMessage] = []
        for byte in bytes {
            decoder.append([byte])
            while let message = try decoder.next() { messages.append(message) }
        }
        #expect(messages == expected)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func randomChunksMatchOneShot() throws {
        let (bytes, expected) = Self.mixedStream(role: .server)
        var random = SeededGenerator(seed: 3)
        for _ in 0..<20 {
            var decoder = WebSocketMessageReader(role: .server, maximumMessageSize: 1 << 20)
            var messages: [WebSocketMessage] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Int.random(in: 1...20_000, using: &random))
                decoder.append(Array(bytes[start..<end]))
                // Sometimes leave messages queued, so appends land behind undecoded bytes.
                if Bool.random(using: &random) {
                    while let message = try decoder.next() { messages.append(message) }
                }
                start = end
            }
            while let message = try decoder.next() { messages.append(message) }
            #expect(messages == expected)
        }
    }

    @Test func fuzzNeverCrashes() {
        var random = SeededGenerator(seed: 0x5EED)
        let valid = Self.mixedStream(role: .server).bytes.prefix(400)
        var outcomes = (messages: 0, errors: 0)
        for round in 0..<2000 {
            let role: WebSocketRole = round % 2 == 0 ? .server : .client
            var input: [UInt8]
            if round % 4 < 2 {
                input = random.bytes(Int.random(in: 0...64, using: &random))
            } else {
                // Mutations of a valid stream reach deeper than pure noise.
                input = Array(valid.prefix(Int.random(in: 0...valid.count, using: &random)))
                for _ in 0..<Int.random(in: 1...4, using: &random) where !input.isEmpty {
                    input[Int.random(in: 0..<input.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            var decoder = WebSocketMessageReader(
                role: role, maximumMessageSize: Int.random(in: 0...512, using: &random))
            var start = 0
            decoding: while start < input.count {
                let end = min(input.count, start + Int.random(in: 1...32, using: &random))
                decoder.append(Array(input[start..<end]))
                start = end
                do {
                    while try decoder.next() != nil { outcomes.messages += 1 }
                } catch {
                    outcomes.errors += 1
                    break decoding
                }
            }
            #expect(decoder.bufferedByteCount >= 0)
        }
        #expect(outcomes.messages > 0 && outcomes.errors > 0)
    }
}
