import WebWire

/// What a WebSocket fuzz input asks for: the first two bytes choose the role, the chunk size, the
/// message size limit and whether the decoder's events stream text; the rest is the wire.
struct WebSocketFuzzInput {
    let role: WebSocketRole
    let chunk: Int
    let maximumMessageSize: Int
    let streamsText: Bool
    let wire: [UInt8]

    init?(_ data: [UInt8]) {
        guard data.count >= 2 else { return nil }
        role = data[0] & 1 == 0 ? .server : .client
        chunk = Int((data[0] >> 1) & 0x0F) + 1
        streamsText = data[0] & 0x20 != 0
        maximumMessageSize = data[1] == 0xFF ? 1 << 20 : Int(data[1]) * 8
        wire = Array(data.dropFirst(2))
    }

    /// The pieces the wire arrives in.
    var pieces: [[UInt8]] {
        stride(from: 0, to: wire.count, by: chunk).map { Array(wire[$0..<min(wire.count, $0 + chunk)]) }
    }
}

/// What a read-out of the decoder made of a stream: the messages it completed, and the error it stopped with.
struct WebSocketDecoding: Equatable {
    var messages: [WebSocketMessage] = []
    var error: WebSocketProtocolError?
}

enum WebSocketFuzzing {
    /// `WebSocketMessageReader` over `pieces`, asking for messages after each; checks that an error
    /// sticks and that the reader holds no more than it was given.
    static func messageReader(_ input: WebSocketFuzzInput, pieces: [[UInt8]]) -> WebSocketDecoding {
        var reader = WebSocketMessageReader(role: input.role, maximumMessageSize: input.maximumMessageSize)
        var result = WebSocketDecoding()
        var given = 0
        var taken = 0
        outer: for piece in pieces {
            reader.append(piece)
            given += piece.count
            while true {
                do throws(WebSocketProtocolError) {
                    guard let message = try reader.next() else { break }
                    result.messages.append(message)
                    taken += size(message)
                    FuzzCheck.expect(bounded(message, input.maximumMessageSize), "a message past the limit")
                } catch {
                    result.error = error
                    break outer
                }
            }
            FuzzCheck.expect(reader.bufferedByteCount <= given - taken, "holds more than it was given")
        }
        if let error = result.error {
            reader.append([0x82, 0x80, 0, 0, 0, 0])
            let again = Result { () throws(WebSocketProtocolError) in try reader.next() }
            FuzzCheck.expect(again.error == error, "the error did not stick")
            FuzzCheck.expect(reader.bufferedByteCount == 0, "holds bytes after an error")
        }
        return result
    }

    /// `WebSocketDecoder`'s events over `pieces`, binary (and with `streamsText`, text) streamed
    /// and joined back into messages; checks the event order (start, payload within the announced
    /// length, end) and that an error sticks. With `stopping`, the handler stops after every event
    /// and decoding resumes with the bytes it did not use (none, if need be).
    static func decoderEvents(
        _ input: WebSocketFuzzInput, pieces: [[UInt8]], streamsText: Bool, stopping: Bool = false
    ) -> WebSocketDecoding {
        let decoder = WebSocketDecoder(
            role: input.role, maximumMessageSize: input.maximumMessageSize,
            streaming: streamsText ? .binaryAndText : .binary)
        var result = WebSocketDecoding()
        var opcode: WebSocketOpcode?
        var message: [UInt8] = []
        var frame: (fin: Bool, length: Int, received: Int)?
        outer: for piece in pieces {
            var bytes = piece
            let outcome = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(WebSocketProtocolError) in
                    var rest = buffer
                    while true {
                        var stopped = false
                        let used = try decoder.decode(rest) { event in
                            stopped = stopping
                            switch event {
                            case .dataFrameStart(let frameOpcode, let fin, let length):
                                FuzzCheck.expect(frame == nil, "a frame started inside a frame")
                                if frameOpcode == .continuation {
                                    FuzzCheck.expect(opcode != nil, "a continuation outside a message")
                                } else {
                                    FuzzCheck.expect(opcode == nil, "a message inside a message")
                                    FuzzCheck.expect(
                                        frameOpcode == .binary || (frameOpcode == .text && streamsText),
                                        "an odd streamed opcode")
                                    opcode = frameOpcode
                                }
                                FuzzCheck.expect(
                                    message.count + length <= input.maximumMessageSize, "a frame past the limit")
                                frame = (fin, length, 0)
                            case .dataPayload(let payload):
                                FuzzCheck.expect(frame != nil, "payload outside a frame")
                                frame?.received += payload.count
                                FuzzCheck.expect(!payload.isEmpty, "an empty payload event")
                                FuzzCheck.expect(
                                    (frame?.received ?? 0) <= (frame?.length ?? 0), "more payload than announced")
                                message += payload
                            case .dataFrameEnd:
                                guard let ended = frame else {
                                    FuzzCheck.expect(false, "an end outside a frame")
                                    return false
                                }
                                FuzzCheck.expect(ended.received == ended.length, "a frame ended short")
                                frame = nil
                                if ended.fin {
                                    if opcode == .text {
                                        let text = String(validating: message, as: UTF8.self)
                                        FuzzCheck.expect(text != nil, "streamed text is not UTF-8")
                                        result.messages.append(.text(text ?? ""))
                                    } else {
                                        result.messages.append(.binary(message))
                                    }
                                    opcode = nil
                                    message = []
                                }
                            case .message(let complete):
                                if case .text = complete {
                                    FuzzCheck.expect(!streamsText, "assembled text while streaming it")
                                }
                                FuzzCheck.expect(
                                    bounded(complete, input.maximumMessageSize), "a message past the limit")
                                result.messages.append(complete)
                            }
                            return !stopping
                        }
                        FuzzCheck.expect(stopped || used == rest.count, "stopped without being asked")
                        // A stop is resumed by calling again with the bytes not used, even none.
                        if !stopped { break }
                        rest = UnsafeMutableRawBufferPointer(rebasing: rest[used...])
                    }
                }
            }
            if case .failure(let error) = outcome {
                result.error = error
                break outer
            }
        }
        if let error = result.error {
            var more: [UInt8] = [0x82, 0x80, 0, 0, 0, 0]
            let again = more.withUnsafeMutableBytes { buffer in
                Result { () throws(WebSocketProtocolError) in try decoder.decode(buffer) { _ in true } }
            }
            FuzzCheck.expect(again.error == error, "the error did not stick")
        }
        return result
    }

    /// The messages as one frame each, as the peer of `role` sends them (masked toward a server).
    static func encode(_ messages: [WebSocketMessage], role: WebSocketRole, key: UInt32) -> [UInt8] {
        let mask: UInt32? = role == .server ? key : nil
        var out: [UInt8] = []
        for message in messages {
            switch message {
            case .text(let text): out += WebSocketFrameEncoder.text(text, maskKey: mask)
            case .binary(let bytes): out += WebSocketFrameEncoder.frame(.binary, bytes, maskKey: mask)
            case .ping(let bytes): out += WebSocketFrameEncoder.frame(.ping, bytes, maskKey: mask)
            case .pong(let bytes): out += WebSocketFrameEncoder.frame(.pong, bytes, maskKey: mask)
            case .close(nil, _): out += WebSocketFrameEncoder.frame(.close, [], maskKey: mask)
            case .close(let code?, let reason):
                out += WebSocketFrameEncoder.closeFrame(code: code, reason: reason, maskKey: mask)
            }
        }
        return out
    }

    static func size(_ message: WebSocketMessage) -> Int {
        switch message {
        case .text(let text): text.utf8.count
        case .binary(let bytes), .ping(let bytes), .pong(let bytes): bytes.count
        case .close(let code, let reason): (code == nil ? 0 : 2) + reason.utf8.count
        }
    }

    /// Data messages within the limit, control payloads within 125 bytes.
    static func bounded(_ message: WebSocketMessage, _ limit: Int) -> Bool {
        switch message {
        case .text, .binary: size(message) <= limit
        default: size(message) <= WebSocketFrameEncoder.maximumControlPayload
        }
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
