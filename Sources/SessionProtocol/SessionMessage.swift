import EndToEndChannel
import HerdrAgents
import HerdrBase
import ScreenModel

/// The terminal session protocol inside the companion channel (docs/companion.md, "The session
/// protocol"), version 1. Each message is one channel message: a type byte from 0x01 to 0x1F
/// (`ChannelMessage` tells the kinds apart), then fixed big-endian fields; every field is bounded. One message fits
/// one Noise frame (at most `maximumLength` bytes), so output and input chunks are at most
/// `maximumData` bytes.
public enum SessionMessage: Hashable, Sendable {
    /// Device → computer: start a session (`name` nil: herdr's default) in a PTY of `cols`×`rows`,
    /// the computer may send `window` bytes of output ahead of what the device consumed.
    case open(stream: UInt32, name: String?, cols: Int, rows: Int, window: Int)
    /// Device → computer: start a session in the pane of the agent `pane` of herdr session
    /// `session` (`herdr agent attach`), which the computer checks against its own list of agents.
    case openAgent(stream: UInt32, session: String, pane: String, cols: Int, rows: Int, window: Int)
    /// Device → computer: carry on the session `token` after a drop, from output offset `received`.
    case resume(stream: UInt32, token: [UInt8], received: UInt64, cols: Int, rows: Int, window: Int)
    /// Computer → device: the session runs; output follows from `offset`. `token` resumes it.
    /// `window` is the window the computer keeps to (at most the one asked for): the device
    /// credits against it.
    case started(stream: UInt32, token: [UInt8], offset: UInt64, window: Int)
    /// Computer → device: output bytes starting at output offset `offset`.
    case output(stream: UInt32, offset: UInt64, data: [UInt8])
    /// Device → computer: keystrokes.
    case input(stream: UInt32, data: [UInt8])
    case resize(stream: UInt32, cols: Int, rows: Int)
    /// Device → computer: every output byte before `consumed` is on the device's screen: the
    /// computer forgets it and may send up to `consumed` + the window.
    case credit(stream: UInt32, consumed: UInt64)
    /// Device → computer: the end of input.
    case endOfInput(stream: UInt32)
    /// Device → computer: hang the session up.
    case close(stream: UInt32)
    /// Computer → device: the session ended after `end` output bytes: its exit status, or the
    /// signal that killed it.
    case exit(stream: UInt32, end: UInt64, status: Int32?, signal: String?)
    /// Computer → device: the open or resume is refused, or the session cannot go on.
    case refused(stream: UInt32, reason: SessionRefusal, text: String)
    /// Device → computer: start a screen session (`target`: a herdr session or an agent's pane) in
    /// a PTY of `cols`×`rows`; the device gets screen states instead of output bytes.
    case openScreen(stream: UInt32, target: ScreenTarget, cols: Int, rows: Int)
    /// Device → computer: carry on the screen session `token` after a drop; the whole screen follows.
    case resumeScreen(stream: UInt32, token: [UInt8], cols: Int, rows: Int)
    /// Computer → device: the screen session runs; `token` resumes it; the computer has received
    /// `inputReceived` input bytes of it (the device sends again what it sent after them).
    case screenStarted(stream: UInt32, token: [UInt8], inputReceived: UInt64)
    /// Computer → device: one part of a numbered screen state.
    case screen(ScreenUpdate)
    /// Device → computer: every part of screen state `state` arrived and is on the device's screen.
    case screenAck(stream: UInt32, state: UInt64)
    /// Device → computer: up to `count` lines of the scrollback before line number `end`.
    case scrollbackRequest(stream: UInt32, end: UInt64, count: Int)
    /// Computer → device: the lines asked for, or the newest of them that fit one message.
    case scrollback(ScrollbackLines)

    public static let version: UInt8 = 1
    /// One Noise frame's worth of application bytes.
    public static let maximumLength = SecureChannelLimits.maximumChunkLength
    /// The largest output or input chunk: the longest message minus the output header.
    public static let maximumData = maximumLength - 13
    public static let tokenSize = 16
    public static let maximumCells = 1000
    public static let windowRange = (4 * 1024)...(64 * 1024 * 1024)
    public static let maximumText = 1024
    public static let maximumSignalName = 32

    enum Kind: UInt8 {
        case open = 0x01, resume, started, output, input, resize, credit, endOfInput, close, exit, refused
        case openAgent = 0x0C
        case openScreen = 0x0E, resumeScreen, screenStarted, screen, screenAck, scrollbackRequest, scrollback
    }

    public var stream: UInt32 {
        switch self {
        case .open(let stream, _, _, _, _), .openAgent(let stream, _, _, _, _, _), .resume(let stream, _, _, _, _, _),
            .started(let stream, _, _, _),
            .output(let stream, _, _), .input(let stream, _), .resize(let stream, _, _), .credit(let stream, _),
            .endOfInput(let stream), .close(let stream), .exit(let stream, _, _, _), .refused(let stream, _, _),
            .openScreen(let stream, _, _, _), .resumeScreen(let stream, _, _, _), .screenStarted(let stream, _, _),
            .screenAck(let stream, _), .scrollbackRequest(let stream, _, _):
            stream
        case .screen(let update): update.stream
        case .scrollback(let lines): lines.stream
        }
    }

    // MARK: - Encoding

    public var bytes: [UInt8] {
        var out = Writer()
        switch self {
        case .open(let stream, let name, let cols, let rows, let window):
            out.kind(.open, stream, version: true)
            out.u16(cols)
            out.u16(rows)
            out.u32(UInt32(clamping: window))
            let text = Array((name ?? "").utf8)
            out.u8(UInt8(clamping: text.count))
            out.bytes += text
        case .openAgent(let stream, let session, let pane, let cols, let rows, let window):
            out.kind(.openAgent, stream, version: true)
            out.u16(cols)
            out.u16(rows)
            out.u32(UInt32(clamping: window))
            for text in [Array(session.utf8), Array(pane.utf8)] {
                out.u8(UInt8(clamping: text.count))
                out.bytes += text
            }
        case .resume(let stream, let token, let received, let cols, let rows, let window):
            out.kind(.resume, stream, version: true)
            out.bytes += token
            out.u64(received)
            out.u16(cols)
            out.u16(rows)
            out.u32(UInt32(clamping: window))
        case .started(let stream, let token, let offset, let window):
            out.kind(.started, stream)
            out.bytes += token
            out.u64(offset)
            out.u32(UInt32(clamping: window))
        case .output(let stream, let offset, let data):
            out.bytes.reserveCapacity(13 + data.count)
            out.kind(.output, stream)
            out.u64(offset)
            out.bytes += data
        case .input(let stream, let data):
            out.bytes.reserveCapacity(5 + data.count)
            out.kind(.input, stream)
            out.bytes += data
        case .resize(let stream, let cols, let rows):
            out.kind(.resize, stream)
            out.u16(cols)
            out.u16(rows)
        case .credit(let stream, let consumed):
            out.kind(.credit, stream)
            out.u64(consumed)
        case .endOfInput(let stream): out.kind(.endOfInput, stream)
        case .close(let stream): out.kind(.close, stream)
        case .exit(let stream, let end, let status, let signal):
            out.kind(.exit, stream)
            out.u64(end)
            out.u8(status == nil ? 0 : 1)
            out.u32(UInt32(bitPattern: status ?? 0))
            let name = Self.utf8(signal ?? "", limit: Self.maximumSignalName)
            out.u8(UInt8(name.count))
            out.bytes += name
        case .refused(let stream, let reason, let text):
            out.kind(.refused, stream)
            out.u8(reason.rawValue)
            let bytes = Self.utf8(text, limit: Self.maximumText)
            out.u16(bytes.count)
            out.bytes += bytes
        case .openScreen(let stream, let target, let cols, let rows):
            out.kind(.openScreen, stream, version: true)
            out.u16(cols)
            out.u16(rows)
            switch target {
            case .session(let name):
                out.u8(0)
                out.shortText(name ?? "")
            case .agent(let session, let pane):
                out.u8(1)
                out.shortText(session)
                out.shortText(pane)
            }
        case .resumeScreen(let stream, let token, let cols, let rows):
            out.kind(.resumeScreen, stream, version: true)
            out.bytes += token
            out.u16(cols)
            out.u16(rows)
        case .screenStarted(let stream, let token, let inputReceived):
            out.kind(.screenStarted, stream)
            out.bytes += token
            out.u64(inputReceived)
        case .screen(let update):
            out.kind(.screen, update.stream)
            update.write(into: &out)
        case .screenAck(let stream, let state):
            out.kind(.screenAck, stream)
            out.u64(state)
        case .scrollbackRequest(let stream, let end, let count):
            out.kind(.scrollbackRequest, stream)
            out.u64(end)
            out.u16(count)
        case .scrollback(let lines):
            out.kind(.scrollback, lines.stream)
            lines.write(into: &out)
        }
        return out.bytes
    }

    /// `text` as UTF-8, cut to at most `limit` bytes at a character boundary.
    static func utf8(_ text: String, limit: Int) -> [UInt8] {
        var out: [UInt8] = []
        for scalar in text.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            guard out.count + bytes.count <= limit else { break }
            out += bytes
        }
        return out
    }

    /// Big-endian fields appended in place: every keystroke and echo is encoded here, so no
    /// temporary arrays, and input and output reserve their size first.
    struct Writer {
        var bytes: [UInt8] = []
        mutating func u8(_ value: UInt8) { bytes.append(value) }
        mutating func u16(_ value: Int) { bigEndian(UInt64(UInt16(clamping: value)), count: 2) }
        mutating func u32(_ value: UInt32) { bigEndian(UInt64(value), count: 4) }
        mutating func u64(_ value: UInt64) { bigEndian(value, count: 8) }
        private mutating func bigEndian(_ value: UInt64, count: Int) {
            var shift = 8 * (count - 1)
            while shift >= 0 {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
                shift -= 8
            }
        }
        /// A length byte and the text's UTF-8 (names and pane ids, at most 255 bytes).
        mutating func shortText(_ text: String) {
            let utf8 = SessionMessage.utf8(text, limit: 255)
            u8(UInt8(utf8.count))
            bytes += utf8
        }
        mutating func kind(_ kind: Kind, _ stream: UInt32, version: Bool = false) {
            bytes.append(kind.rawValue)
            if version { bytes.append(SessionMessage.version) }
            u32(stream)
        }
    }

    // MARK: - Parsing

    /// Parses one message; throws, naming the problem, for anything malformed or out of bounds.
    public init(parsing bytes: [UInt8]) throws(SessionMessageError) {
        var reader = Reader(bytes: bytes)
        guard bytes.count <= Self.maximumLength else {
            throw SessionMessageError("a session message of \(bytes.count) bytes (at most \(Self.maximumLength))")
        }
        guard let kind = Kind(rawValue: try reader.u8()) else {
            throw SessionMessageError("an unknown session message type \(bytes.first ?? 0)")
        }
        func version() throws(SessionMessageError) {
            let version = try reader.u8()
            guard version == Self.version else {
                throw SessionMessageError("session protocol version \(version) (this side speaks \(Self.version))")
            }
        }
        func cells() throws(SessionMessageError) -> (Int, Int) {
            let cols = Int(try reader.u16())
            let rows = Int(try reader.u16())
            guard (1...Self.maximumCells).contains(cols), (1...Self.maximumCells).contains(rows) else {
                throw SessionMessageError("a window of \(cols)×\(rows) cells (1 to \(Self.maximumCells) each)")
            }
            return (cols, rows)
        }
        func window() throws(SessionMessageError) -> Int {
            let window = Int(try reader.u32())
            guard Self.windowRange.contains(window) else {
                throw SessionMessageError("a flow-control window of \(window) bytes")
            }
            return window
        }
        switch kind {
        case .open:
            try version()
            let stream = try reader.u32()
            let (cols, rows) = try cells()
            let window = try window()
            let name = try reader.text(length: Int(try reader.u8()))
            if !name.isEmpty, !HerdrSessionName.isValid(name) {
                throw SessionMessageError("a session name that breaks herdr's rule")
            }
            self = .open(stream: stream, name: name.isEmpty ? nil : name, cols: cols, rows: rows, window: window)
        case .openAgent:
            try version()
            let stream = try reader.u32()
            let (cols, rows) = try cells()
            let window = try window()
            let session = try reader.text(length: Int(try reader.u8()))
            let pane = try reader.text(length: Int(try reader.u8()))
            guard HerdrSessionName.isValid(session), HerdrAgent.isValidPane(pane) else {
                throw SessionMessageError("an agent's session name or pane id that breaks its rule")
            }
            self = .openAgent(stream: stream, session: session, pane: pane, cols: cols, rows: rows, window: window)
        case .resume:
            try version()
            let stream = try reader.u32()
            let token = try reader.take(Self.tokenSize)
            let received = try reader.u64()
            let (cols, rows) = try cells()
            self = .resume(
                stream: stream, token: token, received: received, cols: cols, rows: rows, window: try window())
        case .started:
            self = .started(
                stream: try reader.u32(), token: try reader.take(Self.tokenSize), offset: try reader.u64(),
                window: try window())
        case .output:
            let stream = try reader.u32()
            self = .output(stream: stream, offset: try reader.u64(), data: reader.rest())
        case .input:
            self = .input(stream: try reader.u32(), data: reader.rest())
        case .resize:
            let stream = try reader.u32()
            let (cols, rows) = try cells()
            self = .resize(stream: stream, cols: cols, rows: rows)
        case .credit:
            self = .credit(stream: try reader.u32(), consumed: try reader.u64())
        case .endOfInput: self = .endOfInput(stream: try reader.u32())
        case .close: self = .close(stream: try reader.u32())
        case .exit:
            let stream = try reader.u32()
            let end = try reader.u64()
            let hasStatus = try reader.u8()
            guard hasStatus <= 1 else { throw SessionMessageError("an exit with a status flag of \(hasStatus)") }
            let status = Int32(bitPattern: try reader.u32())
            let length = Int(try reader.u8())
            guard length <= Self.maximumSignalName else {
                throw SessionMessageError("a signal name of \(length) bytes")
            }
            let signal = try reader.text(length: length)
            self = .exit(
                stream: stream, end: end, status: hasStatus == 1 ? status : nil, signal: signal.isEmpty ? nil : signal)
        case .refused:
            let stream = try reader.u32()
            let raw = try reader.u8()
            let length = Int(try reader.u16())
            guard length <= Self.maximumText else { throw SessionMessageError("a refusal text of \(length) bytes") }
            self = .refused(
                stream: stream, reason: SessionRefusal(rawValue: raw) ?? .other, text: try reader.text(length: length))
        case .openScreen:
            try version()
            let stream = try reader.u32()
            let (cols, rows) = try cells()
            let target: ScreenTarget
            switch try reader.u8() {
            case 0:
                let name = try reader.text(length: Int(try reader.u8()))
                if !name.isEmpty, !HerdrSessionName.isValid(name) {
                    throw SessionMessageError("a session name that breaks herdr's rule")
                }
                target = .session(name: name.isEmpty ? nil : name)
            case 1:
                let session = try reader.text(length: Int(try reader.u8()))
                let pane = try reader.text(length: Int(try reader.u8()))
                guard HerdrSessionName.isValid(session), HerdrAgent.isValidPane(pane) else {
                    throw SessionMessageError("an agent's session name or pane id that breaks its rule")
                }
                target = .agent(session: session, pane: pane)
            case let other: throw SessionMessageError("a screen session's target of kind \(other) (0 or 1)")
            }
            self = .openScreen(stream: stream, target: target, cols: cols, rows: rows)
        case .resumeScreen:
            try version()
            let stream = try reader.u32()
            let token = try reader.take(Self.tokenSize)
            let (cols, rows) = try cells()
            self = .resumeScreen(stream: stream, token: token, cols: cols, rows: rows)
        case .screenStarted:
            self = .screenStarted(
                stream: try reader.u32(), token: try reader.take(Self.tokenSize), inputReceived: try reader.u64())
        case .screen:
            self = .screen(try ScreenUpdate(stream: try reader.u32(), reading: &reader))
        case .screenAck:
            let stream = try reader.u32()
            let state = try reader.u64()
            guard state > 0 else { throw SessionMessageError("an acknowledgement of screen state 0") }
            self = .screenAck(stream: stream, state: state)
        case .scrollbackRequest:
            let stream = try reader.u32()
            let end = try reader.u64()
            let count = Int(try reader.u16())
            guard (1...ScrollbackLines.maximumRequest).contains(count) else {
                throw SessionMessageError(
                    "a request for \(count) scrollback lines (1 to \(ScrollbackLines.maximumRequest))")
            }
            self = .scrollbackRequest(stream: stream, end: end, count: count)
        case .scrollback:
            self = .scrollback(try ScrollbackLines(stream: try reader.u32(), reading: &reader))
        }
        guard reader.atEnd else { throw SessionMessageError("\(reader.remaining) bytes after a \(kind) message") }
    }

    struct Reader {
        let bytes: [UInt8]
        var index = 0
        var remaining: Int { bytes.count - index }
        var atEnd: Bool { index == bytes.count }

        mutating func take(_ count: Int) throws(SessionMessageError) -> [UInt8] {
            guard count <= remaining else { throw SessionMessageError("a session message cut short") }
            defer { index += count }
            return Array(bytes[index..<(index + count)])
        }
        // Fields are read in place, not through `take`: every keystroke and echo is parsed here.
        mutating func u8() throws(SessionMessageError) -> UInt8 { UInt8(try bigEndian(1)) }
        mutating func u16() throws(SessionMessageError) -> UInt16 { UInt16(try bigEndian(2)) }
        mutating func u32() throws(SessionMessageError) -> UInt32 { UInt32(try bigEndian(4)) }
        mutating func u64() throws(SessionMessageError) -> UInt64 { try bigEndian(8) }
        private mutating func bigEndian(_ count: Int) throws(SessionMessageError) -> UInt64 {
            guard count <= remaining else { throw SessionMessageError("a session message cut short") }
            var value: UInt64 = 0
            for offset in index..<(index + count) { value = value << 8 | UInt64(bytes[offset]) }
            index += count
            return value
        }
        mutating func text(length: Int) throws(SessionMessageError) -> String {
            let raw = try take(length)
            guard let text = String(validating: raw, as: UTF8.self) else {
                throw SessionMessageError("text that is not UTF-8")
            }
            return text
        }
        mutating func rest() -> [UInt8] {
            defer { index = bytes.count }
            return Array(bytes[index...])
        }
    }
}

/// Why the computer refused a session.
public enum SessionRefusal: UInt8, Hashable, Sendable {
    /// The session to resume is not there: never was, its grace period passed, or it ended.
    case unknownSession = 1
    /// The output from the resume point is no longer kept.
    case resumePointLost = 2
    /// The session's command could not be started.
    case startFailed = 4
    /// This device already has as many sessions as the computer allows.
    case tooManySessions = 5
    /// The agent to open is not among the computer's agents (gone, or never there).
    case unknownAgent = 6
    case other = 255
}

/// A session message that does not parse: the peer is broken or hostile; the channel ends.
public struct SessionMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
