import CompanionPairing
import EndToEndChannel
import Foundation
import HerdrCrypto
import HerdrKit
import Noise
import PeerGate
import RelayClient
import RelayProtocol
import ScreenModel

@testable import SessionProtocol

/// docs/companion.md's worked example, made by the real code: the companion code, the relay's
/// admission frames and join transcripts, the Noise handshakes (with fixed ephemeral keys, the
/// Noise code's test-only knob), every application message and the frame that carries it, one
/// pairing, one session of bytes and one screen session. `WorkedExampleTests` compares it with the doc's text.
struct WorkedExample {
    /// `count` bytes of `byte`: every fixed input is one, so a reader can type it.
    static func repeated(_ byte: UInt8, _ count: Int) -> [UInt8] { [UInt8](repeating: byte, count: count) }

    let origin = "https://relay.example.com"
    let computerStatic: KeyPair
    let deviceStatic: KeyPair
    let pairingID = repeated(0x07, 16)
    let roomSecret = repeated(0x08, 32)
    let sessionToken = repeated(0x0B, 16)
    let screenToken = repeated(0x10, 16)
    /// The relay's challenges and registration tokens, as it sent them.
    let nonces: [String: [UInt8]] = [
        "pairing mac": repeated(0x09, 32), "pairing phone": repeated(0x0A, 32), "session mac": repeated(0x0D, 32),
        "session phone": repeated(0x0E, 32),
    ]
    let tokens: [String: [UInt8]] = ["pairing": repeated(0x0C, 24), "session": repeated(0x0F, 24)]
    /// `x` of the code: 2027-01-01T00:02:00Z, two minutes after the computer made it.
    let expiry = Date(timeIntervalSince1970: 1_798_761_720)

    private var out: [String] = []

    init() throws {
        computerStatic = try KeyPair(privateKey: Self.repeated(0x01, 32))
        deviceStatic = try KeyPair(privateKey: Self.repeated(0x02, 32))
    }

    // MARK: - Formatting

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// Hex in lines of 32 bytes, for a code block.
    static func hexLines(_ bytes: [UInt8]) -> [String] {
        stride(from: 0, to: max(bytes.count, 1), by: 32).map { hex(bytes[$0..<min($0 + 32, bytes.count)]) }
    }

    private mutating func line(_ text: String = "") { out.append(text) }

    private mutating func block(_ lines: [String]) {
        line("```")
        out += lines
        line("```")
    }

    /// A numbered step's line (the doc's list), then an optional block.
    private mutating func step(_ text: String, _ lines: [String]? = nil) {
        line("- \(text)")
        if let lines {
            line()
            block(lines)
        }
        line()
    }

    // MARK: - The example

    mutating func markdown() throws -> String {
        out = []
        let pid = Base64URL.encode(pairingID)
        let code = try self.code()
        let room = code.room
        let key = try RelayJoinKey(roomSecret: roomSecret)

        line("Every value below comes from the code: `Tests/CompanionTests/WorkedExample.swift` writes this text")
        line("and `WorkedExampleTests` checks it. The keys are fixed so that it can be reproduced (never use")
        line("them): each input is one byte repeated. Hex is lowercase, 32 bytes to a line. A frame is one")
        line("WebSocket binary message: a Noise message; after the handshake, the transport message of the")
        line("flag byte `00` (the last chunk) and the application message, encrypted with the sender's key and")
        line("nonce (each side counts its frames from 0).")
        line()
        line("| input | value |")
        line("|---|---|")
        line("| computer static private key | 32 × `01`; public (`rs`) `\(Self.hex(computerStatic.publicKey))` |")
        line("| device static private key | 32 × `02`; public `\(Self.hex(deviceStatic.publicKey))` |")
        line(
            "| ephemeral private keys | pairing: device 32 × `03`, computer 32 × `04`; session: device 32 × `05`, computer 32 × `06` |"
        )
        line("| `pid` | 16 × `07`: `\(pid)` |")
        line("| room secret | 32 × `08`; join key's verifier V `\(Self.hex(key.verifier.raw))` |")
        line(
            "| the relay's challenges | pairing: mac 32 × `09`, phone 32 × `0a`; session: mac 32 × `0d`, phone 32 × `0e` |"
        )
        line("| registration tokens | pairing 24 × `0c`, session 24 × `0f` |")
        line("| session token | 16 × `0b` |")
        line()

        line("### One pairing")
        line()
        step(
            "`herdr-host pair --relay \(origin)` on a computer named `studio` shows (it was 2027-01-01T00:00:00Z):",
            [code.url])
        step(
            "The room is `\(room)`; the prologue is `\(String(decoding: CompanionProfile.herdrRemote.prologue(pid: pid), as: UTF8.self))`."
        )
        admission(role: .computer, room: room, nonce: nonces["pairing mac"]!, key: nil, token: nil)
        admission(role: .device, room: room, nonce: nonces["pairing phone"]!, key: nil, token: tokens["pairing"])
        var (device, computer) = try handshake(
            pid: pid, deviceEphemeral: Self.repeated(0x03, 32), computerEphemeral: Self.repeated(0x04, 32))
        guard let hash = device.established?.handshakeHash else { throw WorkedExampleError("no handshake hash") }
        let sas = try CompanionProfile.herdrRemote.sas(handshakeHash: hash)
        step(
            "The handshake hash is `\(Self.hex(hash))`; the device shows `Type this code on studio: \(sas.prefix(3)) \(sas.suffix(3))`, and the person types it on the computer."
        )
        var counters = (device: 0, computer: 0)
        try message(
            CompanionMessage.pairing(accepted: true), from: &computer, to: &device, counter: &counters.computer,
            computerToDevice: true)
        let pairingStatus = CompanionMessage.status(.init(name: "phone", roomSecret: roomSecret, registered: false))
        try message(pairingStatus, from: &device, to: &computer, counter: &counters.device, computerToDevice: false)
        try message(
            .home([try HomeAddress(parsing: "[fd00::7]:4610")]), from: &computer, to: &device,
            counter: &counters.computer, computerToDevice: true)
        try message(
            .statusAcknowledged, from: &computer, to: &device, counter: &counters.computer, computerToDevice: true)
        step(
            "The device calls `POST /register` (`x-relay-room: \(room.prefix(8))…`, `User-Agent: iTerm2Companion`, `Content-Type: application/json`) with its admission's token and V:",
            [
                "{\"registrationToken\":\"\(Data(tokens["pairing"]!).base64EncodedString())\",\"verifier\":\"\(Data(key.verifier.raw).base64EncodedString())\"}"
            ])
        try message(.registered, from: &device, to: &computer, counter: &counters.device, computerToDevice: false)
        step("Both sides close; the room is established, and the computer's `herdr-host run` parks in it.")

        line("### One session")
        line()
        line("A later `herdr-remote connect studio`, `herdr-host run` parked: fresh admissions, signed now, and a")
        line("fresh handshake.")
        line()
        admission(role: .computer, room: room, nonce: nonces["session mac"]!, key: key, token: nil)
        admission(role: .device, room: room, nonce: nonces["session phone"]!, key: key, token: tokens["session"])
        (device, computer) = try handshake(
            pid: pid, deviceEphemeral: Self.repeated(0x05, 32), computerEphemeral: Self.repeated(0x06, 32))
        counters = (0, 0)
        let status = CompanionMessage.status(.init(name: "phone", roomSecret: roomSecret, registered: true))
        try message(status, from: &device, to: &computer, counter: &counters.device, computerToDevice: false)
        try message(
            .servedByThisVersion, from: &computer, to: &device, counter: &counters.computer, computerToDevice: true)
        try message(
            .statusAcknowledged, from: &computer, to: &device, counter: &counters.computer, computerToDevice: true)
        try message(
            .home([try HomeAddress(parsing: "[fd00::7]:4610")]), from: &computer, to: &device,
            counter: &counters.computer, computerToDevice: true)
        let window = 4 * 1024 * 1024
        /// A session message, or a control message of the session's (the window, liveness).
        enum Step {
            case session(SessionMessage, String)
            case control(CompanionMessage)
        }
        let session: [(Step, Bool)] = [
            (
                .session(
                    .open(stream: 1, name: nil, cols: 80, rows: 24, window: window),
                    "open: version 1, stream 1, 80×24, window 4 MiB, no name (herdr's default session)"), false
            ),
            (
                .session(
                    .started(stream: 1, token: sessionToken, offset: 0, window: window),
                    "started: stream 1, the token, offset 0, window 4 MiB"), true
            ),
            // The device's window starts at the path's floor ("Output and credit").
            (.control(.window(stream: 1, bytes: 256 * 1024)), false),
            (.session(.output(stream: 1, offset: 0, data: Array("$ ".utf8)), "output: stream 1, offset 0, `$ `"), true),
            (
                .session(
                    .input(stream: 1, data: Array("exit\r".utf8)), "input: stream 1, `exit` and a carriage return"),
                false
            ),
            // A ping follows the keystrokes ("Liveness"); the computer answers at once.
            (.control(.ping(1)), false),
            (.control(.pong(1)), true),
            (
                .session(
                    .output(stream: 1, offset: 2, data: Array("exit\r\n".utf8)), "output: stream 1, offset 2, the echo"),
                true
            ),
            (
                .session(
                    .exit(stream: 1, end: 8, status: 0, signal: nil),
                    "exit: stream 1, end 8, has status 1, status 0, no signal name"), true
            ),
            (.session(.close(stream: 1), "close: stream 1"), false),
        ]
        for (step, computerToDevice) in session {
            switch (step, computerToDevice) {
            case (.session(let message, let what), true):
                try self.message(
                    message, what, from: &computer, to: &device, counter: &counters.computer, computerToDevice: true)
            case (.session(let message, let what), false):
                try self.message(
                    message, what, from: &device, to: &computer, counter: &counters.device, computerToDevice: false)
            case (.control(let message), true):
                try self.message(
                    message, from: &computer, to: &device, counter: &counters.computer, computerToDevice: true)
            case (.control(let message), false):
                try self.message(
                    message, from: &device, to: &computer, counter: &counters.device, computerToDevice: false)
            }
        }
        step(
            "The device ends with status 0. Had it credited output (every quarter of the window: after 64 KiB on its screen, with the 256 KiB window it asked for), the credit would have been `\(Self.fields(SessionMessage.credit(stream: 1, consumed: 64 * 1024)))`."
        )
        try screenSession(device: &device, computer: &computer, counters: &counters)
        return out.joined(separator: "\n") + "\n"
    }

    /// A screen session on the same channel: a prompt, `ls` typed, its listing, the close. The
    /// states are `ScreenStateSender`'s at the times given, checked on a `ScreenReplica`.
    private mutating func screenSession(
        device: inout CompanionChannel, computer: inout CompanionChannel, counters: inout (device: Int, computer: Int)
    ) throws {
        line("### One screen session")
        line()
        line("On the same channel (the computer said it serves screen sessions before its ack), the device")
        line("opens a screen session of 20 × 4 on stream 3. The program shows a prompt and the title `~`; the")
        line("person types `ls`; the listing has a directory in bold blue; the device closes the session.")
        line("Times are seconds from the open.")
        line()
        func cells(_ text: String, _ style: CellStyle = .plain) -> [ScreenCell] {
            text.map { ScreenCell(text: String($0), style: style) }
        }
        func screen(_ rows: [[ScreenCell]], cursor: (Int, Int)) -> TerminalScreen {
            TerminalScreen(
                lines: (0..<4).map { row in
                    let line = row < rows.count ? rows[row] : []
                    return line + Array(repeating: .blank, count: 20 - line.count)
                }, cursor: TerminalScreen.Cursor(row: cursor.0, column: cursor.1, visible: true), title: "~")
        }
        let prompt = screen([cells("$ ")], cursor: (0, 2))
        let blue = CellStyle(foreground: .indexed(4), flags: .bold)
        let listed = screen(
            [cells("$ ls"), cells("notes.txt  ") + cells("src", blue), cells("$ ")], cursor: (2, 2))
        var sender = ScreenStateSender(stream: 3)
        var replica = ScreenReplica()
        func toDevice(_ message: SessionMessage, _ what: String) throws {
            try self.message(
                message, what, from: &computer, to: &device, counter: &counters.computer, computerToDevice: true)
            if case .screen(let update) = message, case .broken(let why) = replica.apply(update) {
                throw WorkedExampleError("the device's replica refused the state: \(why)")
            }
        }
        func toComputer(_ message: SessionMessage, _ what: String) throws {
            try self.message(
                message, what, from: &device, to: &computer, counter: &counters.device, computerToDevice: false)
        }
        try toComputer(
            .openScreen(stream: 3, target: .session(name: nil), cols: 20, rows: 4),
            "open screen: version 1, stream 3, 20×4, target 0 (a herdr session), no name (the default session)")
        try toDevice(
            .screenStarted(stream: 3, token: screenToken, inputReceived: 0),
            "screen started: stream 3, the token, input received 0")
        for message in sender.messages(for: prompt, bells: 0, now: 0) {
            try toDevice(
                message,
                "screen at 0: stream 3, state 1, base 0 (whole), input 0, flags 3 (the last part, the title), 20×4, cursor 0,2, modes 1 (cursor visible), mouse 0, bells 0, scroll 0, the title `~`, one row: row 0 from column 0 (the rest blank), one text run (default colours, no attributes) of two cells, `$` and a space"
            )
        }
        try toComputer(.screenAck(stream: 3, state: 1), "screen ack at 0.1: stream 3, state 1")
        guard sender.acknowledged(1, now: 0.1) else { throw WorkedExampleError("state 1 was not in flight") }
        try toComputer(
            .input(stream: 3, data: Array("ls\r".utf8)), "input at 0.2: stream 3, `ls` and a carriage return")
        sender.inputWritten(total: 3, now: 0.2)
        sender.screenChanged(now: 0.2)
        guard sender.nextSendTime() == 0.2 + sender.settings.collectDelay else {
            throw WorkedExampleError("the state after the input is due at \(String(describing: sender.nextSendTime()))")
        }
        for message in sender.messages(for: listed, bells: 0, now: 0.208) {
            try toDevice(
                message,
                "screen at 0.208 (8 ms after the output began): stream 3, state 2, base 1, input 0 (the input is not 50 ms old), flags 1, 20×4, cursor 2,2, modes 1, mouse 0, bells 0, scroll 0, no title, three rows: row 0 from column 2 (`ls`: `$ ` stays, the rest blank), row 1 from column 0 (a plain text run `notes.txt  `, then a text run of palette colour 4, bold, `src`), row 2 from column 0 (`$ `)"
            )
        }
        guard sender.nextSendTime() == 0.258 else {
            throw WorkedExampleError(
                "the input's acknowledgement is due at \(String(describing: sender.nextSendTime()))")
        }
        for message in sender.messages(for: listed, bells: 0, now: 0.258) {
            try toDevice(
                message,
                "screen at 0.258 (the input 50 ms old, and 50 ms, half the round trip, after the last state): stream 3, state 3, base 2, input 3, flags 1, 20×4, cursor 2,2, modes 1, mouse 0, bells 0, scroll 0, no title, no rows: the screen as it was, now confirming the three bytes typed"
            )
        }
        guard replica.screen == listed, replica.state == 3, replica.inputBytes == 3 else {
            throw WorkedExampleError("the device's screen is not the computer's")
        }
        try toComputer(.screenAck(stream: 3, state: 3), "screen ack: stream 3, state 3 (covering state 2)")
        try toComputer(.close(stream: 3), "close: stream 3")
        step("The computer hangs up the program; the device's screen was the last one shown.")
    }

    /// The code `herdr-host pair` shows.
    func code() throws -> CompanionCode {
        CompanionCode(
            staticPublicKey: computerStatic.publicKey, pairingID: pairingID,
            relay: try RelayEndpoint(parsing: origin), computerName: "studio", expiresAt: expiry,
            home: [try HomeAddress(parsing: "[fd00::7]:4610")])
    }

    // MARK: - Steps

    /// Hello, Challenge, Proof (with the join transcript when signed), Result.
    private mutating func admission(role: RelayRole, room: String, nonce: [UInt8], key: RelayJoinKey?, token: [UInt8]?)
    {
        let who = role == .computer ? "The computer (`mac`)" : "The device (`phone`)"
        line(
            "- \(who) opens `GET /` with `x-relay-room: \(room.prefix(8))…` and `User-Agent: iTerm2Companion`; its admission:"
        )
        line()
        var frames = [
            "→ " + RelayHello(role: role).json, "← " + RelayChallenge(nonce: nonce).json,
        ]
        var transcript: [UInt8]?
        if let key {
            transcript = RelayTranscript.join(role: role, nonce: nonce, room: room, origin: origin)
            frames.append(
                "→ "
                    + RelayProof.signature(
                        (try? key.signJoin(role: role, nonce: nonce, room: room, origin: origin)) ?? []
                    ).json)
        } else {
            frames.append("→ " + RelayProof.empty.json)
        }
        frames.append("← " + RelayResult.admitted(registrationToken: token).json)
        block(frames)
        if let transcript {
            line()
            line(
                "  signed with the join key over the join transcript, each field after its length (u32, big-endian): the domain, `01`, the role, the challenge's 32 raw bytes, the room's 64 characters, the origin (texts as their UTF-8):"
            )
            line()
            block(Self.canonicalFields(transcript, text: [0, 4, 5]))
        }
        line()
    }

    /// The three XK messages with fixed ephemerals; the two established channels.
    private mutating func handshake(pid: String, deviceEphemeral: [UInt8], computerEphemeral: [UInt8]) throws
        -> (device: CompanionChannel, computer: CompanionChannel)
    {
        let prologue = CompanionProfile.herdrRemote.prologue(pid: pid)
        var device = CompanionChannel(
            handshake: try CompanionHandshake(
                pattern: .xk, initiator: true, prologue: prologue, s: deviceStatic, rs: computerStatic.publicKey,
                insecureFixedEphemeralForTestsOnly: try KeyPair(privateKey: deviceEphemeral)))
        var computer = CompanionChannel(
            handshake: try CompanionHandshake(
                pattern: .xk, initiator: false, prologue: prologue, s: computerStatic,
                insecureFixedEphemeralForTestsOnly: try KeyPair(privateKey: computerEphemeral)))
        let first = try Self.frame(try device.start())
        let second = try Self.frame(try computer.receive(first))
        let third = try Self.frame(try device.receive(second))
        _ = try computer.receive(third)
        guard device.isEstablished, computer.isEstablished,
            computer.established?.remoteStaticPublicKey == deviceStatic.publicKey
        else { throw WorkedExampleError("the handshake did not complete") }
        line("- The Noise handshake, one WebSocket binary message each (empty payloads):")
        line()
        block(
            ["→ message 1 (e, es), \(first.count) bytes:"] + Self.hexLines(first)
                + ["← message 2 (e, ee), \(second.count) bytes:"] + Self.hexLines(second)
                + ["→ message 3 (s, se), \(third.count) bytes:"] + Self.hexLines(third))
        line()
        return (device, computer)
    }

    private mutating func message(
        _ message: CompanionMessage, from sender: inout CompanionChannel, to receiver: inout CompanionChannel,
        counter: inout Int, computerToDevice: Bool
    ) throws {
        let text = String(decoding: message.bytes, as: UTF8.self)
        try carry(
            message.bytes, "`\(text)`", from: &sender, to: &receiver, counter: &counter,
            computerToDevice: computerToDevice)
    }

    private mutating func message(
        _ message: SessionMessage, _ what: String, from sender: inout CompanionChannel,
        to receiver: inout CompanionChannel, counter: inout Int, computerToDevice: Bool
    ) throws {
        try carry(
            message.bytes, "\(what): `\(Self.fields(message))`", from: &sender, to: &receiver, counter: &counter,
            computerToDevice: computerToDevice)
    }

    /// One application message: what it is, and the frame (flag byte `00` and the message,
    /// encrypted with the sender's nonce `counter`) that the receiving channel reads back.
    private mutating func carry(
        _ bytes: [UInt8], _ what: String, from sender: inout CompanionChannel, to receiver: inout CompanionChannel,
        counter: inout Int, computerToDevice: Bool
    ) throws {
        let frames = try sender.send(bytes)
        guard frames.count == 1 else { throw WorkedExampleError("a message of more than one frame") }
        guard try receiver.receive(frames[0]) == [.deliver(bytes)] else {
            throw WorkedExampleError("the other side read something else")
        }
        line(
            "- \(computerToDevice ? "computer → device" : "device → computer"), \(what); its frame (nonce \(counter)):")
        line()
        block(Self.hexLines(frames[0]))
        line()
        counter += 1
    }

    // MARK: - Fields

    private static func frame(_ actions: [CompanionChannel.Action]) throws -> [UInt8] {
        for case .send(let frame) in actions { return frame }
        throw WorkedExampleError("no frame to send")
    }

    /// A session message's fields in hex, a space between fields (the layout of "The session
    /// protocol"); checked to be the message's bytes.
    static func fields(_ message: SessionMessage) -> String {
        let bytes = message.bytes
        let widths: [Int]
        switch message {
        case .open(_, let name, _, _, _): widths = [1, 1, 4, 2, 2, 4, 1, name?.utf8.count ?? 0]
        case .started: widths = [1, 4, 16, 8, 4]
        case .output: widths = [1, 4, 8, bytes.count - 13]
        case .input: widths = [1, 4, bytes.count - 5]
        case .credit: widths = [1, 4, 8]
        case .close, .endOfInput: widths = [1, 4]
        case .exit(_, _, _, let signal): widths = [1, 4, 8, 1, 4, 1, signal?.utf8.count ?? 0]
        case .openScreen(_, .session(let name), _, _): widths = [1, 1, 4, 2, 2, 1, 1, name?.utf8.count ?? 0]
        case .screenStarted: widths = [1, 4, 16, 8]
        case .screenAck: widths = [1, 4, 8]
        case .screen(let update):
            // type, stream, state, base, input, flags, cols, rows, cursor, modes, mouse, bells, scroll
            widths =
                [1, 4, 8, 8, 8, 1, 2, 2, 2, 2, 1, 1, 4, 2, 2, update.title?.utf8.count ?? 0, 2]
                + update.lines.flatMap { [2, ScreenParts.encodedLength(of: $0) - 2] }
        default: widths = [bytes.count]
        }
        var parts: [String] = []
        var index = 0
        for width in widths where width > 0 {
            parts.append(hex(bytes[index..<index + width]))
            index += width
        }
        precondition(index == bytes.count, "the fields of \(message) do not cover its bytes")
        return parts.joined(separator: " ")
    }

    /// A canonical encoding, one field to a line: its length in hex, then the field, in hex or, for
    /// the fields at `text`, as the text whose UTF-8 it is.
    static func canonicalFields(_ bytes: [UInt8], text: Set<Int>) -> [String] {
        var lines: [String] = []
        var index = 0
        while index + 4 <= bytes.count {
            let length = bytes[index..<index + 4].reduce(0) { $0 << 8 | Int($1) }
            let field = bytes[index + 4..<index + 4 + length]
            let shown = text.contains(lines.count) ? "\"\(String(decoding: field, as: UTF8.self))\"" : hex(field)
            lines.append(hex(bytes[index..<index + 4]) + " " + shown)
            index += 4 + length
        }
        precondition(index == bytes.count, "not a canonical encoding")
        return lines
    }
}

struct WorkedExampleError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
