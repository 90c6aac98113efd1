import Testing
import WebWire

/// RFC 6455 §5.7 examples, and every rule the decoder enforces, each on both sides of its limit,
/// read a message at a time.
@Suite struct WebSocketMessageReaderTests {
    static let hello = Array("Hello".utf8)

    // MARK: RFC 6455 §5.7

    @Test func unmaskedHelloFromServer() throws {
        #expect(try decodeAll(hex("81 05 48 65 6c 6c 6f"), role: .client) == [.text("Hello")])
    }

    @Test func maskedHelloFromClient() throws {
        #expect(try decodeAll(hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"), role: .server) == [.text("Hello")])
    }

    @Test func fragmentedHello() throws {
        #expect(try decodeAll(hex("01 03 48 65 6c 80 02 6c 6f"), role: .client) == [.text("Hello")])
    }

    @Test func pingAndMaskedPong() throws {
        #expect(try decodeAll(hex("89 05 48 65 6c 6c 6f"), role: .client) == [.ping(Self.hello)])
        #expect(try decodeAll(hex("8a 85 37 fa 21 3d 7f 9f 4d 51 58"), role: .server) == [.pong(Self.hello)])
    }

    @Test func binaryWith16And64BitLengths() throws {
        let small = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(try decodeAll(hex("82 7e 01 00") + small, role: .client) == [.binary(small)])
        let large = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        #expect(try decodeAll(hex("82 7f 00 00 00 00 00 01 00 00") + large, role: .client) == [.binary(large)])
    }

    @Test func nonMinimalLengthIsAccepted() throws {
        #expect(try decodeAll(hex("82 7e 00 05") + Self.hello, role: .client) == [.binary(Self.hello)])
        #expect(
            try decodeAll(hex("82 7f 00 00 00 00 00 00 00 05") + Self.hello, role: .client) == [.binary(Self.hello)])
    }

    @Test func emptyMessages() throws {
        #expect(
            try decodeAll(hex("81 00 82 00 89 00 88 00"), role: .client) == [
                .text(""), .binary([]), .ping([]), .close(code: nil, reason: ""),
            ])
    }

    // MARK: Framing errors (1002)

    @Test func reservedBits() {
        for first: UInt8 in [0xC1, 0xA1, 0x91] {
            #expect(decodeError([first, 0x00], role: .client)?.closeCode == 1002)
        }
    }

    @Test func unknownOpcodes() {
        for opcode: UInt8 in [3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            #expect(decodeError([0x80 | opcode, 0x00], role: .client)?.closeCode == 1002)
        }
    }

    @Test func maskingMustMatchTheRole() {
        #expect(decodeError(hex("81 05 48 65 6c 6c 6f"), role: .server)?.closeCode == 1002)
        #expect(decodeError(hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"), role: .client)?.closeCode == 1002)
    }

    @Test func controlFrameLimits() throws {
        let ok = [UInt8](repeating: 0x61, count: 125)
        #expect(try decodeAll(frame(.ping, ok, to: .server), role: .server) == [.ping(ok)])
        // 126 announced in the 2-byte header alone is enough to refuse.
        #expect(decodeError(hex("89 fe"), role: .server)?.closeCode == 1002)
        #expect(decodeError(hex("89 7e 00 7e"), role: .client)?.closeCode == 1002)
        // A control frame without FIN.
        #expect(decodeError(hex("09 00"), role: .client)?.closeCode == 1002)
        #expect(decodeError(hex("08 00"), role: .client)?.closeCode == 1002)
    }

    @Test func continuationRules() {
        // Nothing to continue.
        #expect(decodeError(hex("80 01 61"), role: .client)?.closeCode == 1002)
        // A new text or binary frame while a fragmented message is open.
        #expect(decodeError(hex("01 01 61 81 01 62"), role: .client)?.closeCode == 1002)
        #expect(decodeError(hex("01 01 61 02 01 62"), role: .client)?.closeCode == 1002)
        // After a finished message, continuation is again out of place.
        #expect(decodeError(hex("81 01 61 80 01 62"), role: .client)?.closeCode == 1002)
    }

    @Test func controlFramesBetweenFragments() throws {
        let stream = hex("01 02 48 65 89 01 21 00 01 6c 8a 00 80 02 6c 6f")
        #expect(try decodeAll(stream, role: .client) == [.ping([0x21]), .pong([]), .text("Hello")])
    }

    @Test func errorsAreSticky() {
        var decoder = WebSocketMessageReader(role: .client, maximumMessageSize: 100)
        decoder.append(hex("c1 00 81 00"))
        #expect(throws: WebSocketProtocolError.self) { try decoder.next() }
        #expect(throws: WebSocketProtocolError.self) { try decoder.next() }
        decoder.append(hex("81 00"))
        #expect(throws: WebSocketProtocolError.self) { try decoder.next() }
        #expect(decoder.bufferedByteCount == 0)
    }

    // MARK: Size limit (1009)

    @Test func messageExactlyAtTheLimitPasses() throws {
        let payload = [UInt8](repeating: 7, count: 100)
        #expect(
            try decodeAll(frame(.binary, payload, to: .server), role: .server, maximumMessageSize: 100) == [
                .binary(payload)
            ])
        let fragmented =
            frame(.binary, Array(payload[..<60]), fin: false, to: .server)
            + frame(.continuation, Array(payload[60...]), to: .server)
        #expect(try decodeAll(fragmented, role: .server, maximumMessageSize: 100) == [.binary(payload)])
    }

    @Test func oneOverTheLimitFailsFromTheHeaderAlone() {
        let header = Array(frame(.binary, [UInt8](repeating: 7, count: 101), to: .server).prefix(6))
        let error = decodeError(header, role: .server, maximumMessageSize: 100)
        #expect(error == WebSocketProtocolError(closeCode: 1009, reason: "frame too large"))
        // 16-bit and 64-bit lengths: only the header bytes are fed.
        #expect(decodeError(hex("82 7e 01 00"), role: .client, maximumMessageSize: 255)?.closeCode == 1009)
        #expect(
            decodeError(hex("82 7f 00 00 00 00 00 01 00 00"), role: .client, maximumMessageSize: 65535)?.closeCode
                == 1009)
        // A 64-bit length with the top bit set is just too large.
        #expect(decodeError(hex("82 7f 80 00 00 00 00 00 00 00"), role: .client)?.closeCode == 1009)
        #expect(decodeError(hex("82 7f ff ff ff ff ff ff ff ff"), role: .client)?.closeCode == 1009)
    }

    @Test func fragmentsSumAgainstTheLimit() {
        let first = frame(.text, [UInt8](repeating: 0x61, count: 60), fin: false, to: .client)
        let secondHeader = hex("80 29")  // 41 more bytes: 101 in all
        #expect(decodeError(first + secondHeader, role: .client, maximumMessageSize: 100)?.closeCode == 1009)
    }

    @Test func controlFramesDoNotCountAgainstTheLimit() throws {
        let ping = [UInt8](repeating: 1, count: 125)
        #expect(try decodeAll(frame(.ping, ping, to: .client), role: .client, maximumMessageSize: 0) == [.ping(ping)])
    }

    @Test func raisingTheLimitMidStreamTakesEffect() throws {
        let small = [UInt8](repeating: 1, count: 8)
        let large = [UInt8](repeating: 2, count: 20)
        var decoder = WebSocketMessageReader(role: .server, maximumMessageSize: 8)
        decoder.append(frame(.binary, small, to: .server) + frame(.binary, large, to: .server))
        #expect(try decoder.next() == .binary(small))
        decoder.maximumMessageSize = 20
        #expect(try decoder.next() == .binary(large))
        #expect(try decoder.next() == nil)
        // Lowering it works the same way.
        decoder.maximumMessageSize = 19
        decoder.append(frame(.binary, large, to: .server))
        #expect(throws: WebSocketProtocolError(closeCode: 1009, reason: "frame too large")) { try decoder.next() }
    }

    @Test func bufferedByteCountTracksHeldBytes() throws {
        var decoder = WebSocketMessageReader(role: .server, maximumMessageSize: 1000)
        let bytes = frame(.binary, [UInt8](repeating: 3, count: 300), to: .server)
        decoder.append(Array(bytes[..<100]))
        #expect(decoder.bufferedByteCount == 100)
        #expect(try decoder.next() == nil)
        // The 8 header bytes are consumed; 92 payload bytes are held.
        #expect(decoder.bufferedByteCount == 92)
        decoder.append(Array(bytes[100...]))
        #expect(decoder.bufferedByteCount == 300)
        #expect(try decoder.next() == .binary([UInt8](repeating: 3, count: 300)))
        #expect(decoder.bufferedByteCount == 0)
    }

    // MARK: UTF-8 (1007)

    @Test func validMultiByteText() throws {
        let text = "héllo € 𝄞 日本"
        #expect(try decodeAll(frame(.text, Array(text.utf8), to: .server), role: .server) == [.text(text)])
    }

    @Test func invalidUTF8() {
        for bad in [hex("c0 80"), hex("ed a0 80"), hex("f4 90 80 80"), hex("80"), hex("e2 82"), hex("ff")] {
            #expect(decodeError(frame(.text, bad, to: .client), role: .client)?.closeCode == 1007)
        }
    }

    @Test func characterSplitAcrossFragments() throws {
        // "€" is E2 82 AC; each fragment alone is invalid, the message is not.
        let stream =
            frame(.text, [0x61, 0xE2], fin: false, to: .server)
            + frame(.continuation, [0x82], fin: false, to: .server) + frame(.ping, [], to: .server)
            + frame(.continuation, [0xAC], to: .server)
        #expect(try decodeAll(stream, role: .server) == [.ping([]), .text("a€")])
        // Truncated at the end of the message it is invalid.
        let truncated = frame(.text, [0x61, 0xE2], fin: false, to: .server) + frame(.continuation, [0x82], to: .server)
        #expect(decodeError(truncated, role: .server)?.closeCode == 1007)
    }

    @Test func binaryIsNotValidated() throws {
        #expect(
            try decodeAll(frame(.binary, hex("c0 80 ff"), to: .client), role: .client) == [.binary(hex("c0 80 ff"))])
    }

    // MARK: Close frames

    @Test func closeCodesAndReasons() throws {
        #expect(
            try decodeAll(frame(.close, hex("03 e8") + Array("bye".utf8), to: .server), role: .server) == [
                .close(code: 1000, reason: "bye")
            ])
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999] {
            let payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
            #expect(
                try decodeAll(frame(.close, payload, to: .client), role: .client) == [.close(code: code, reason: "")])
        }
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1012, 1013, 1014, 1015, 1016, 2000, 2999, 5000, 65535] {
            let payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
            #expect(decodeError(frame(.close, payload, to: .client), role: .client)?.closeCode == 1002)
        }
    }

    @Test func malformedClosePayloads() {
        #expect(decodeError(frame(.close, [0x03], to: .server), role: .server)?.closeCode == 1002)
        #expect(decodeError(frame(.close, hex("03 e8 ed a0 80"), to: .server), role: .server)?.closeCode == 1007)
    }
}
