import Foundation
import HerdrKit

/// The one token the enroll command prints, and the status it exits with (interop-facts §4).
public enum EnrollOutcome: String, Sendable, CaseIterable {
    /// Approved: the device key is authorized.
    case ok = "OK"
    /// Bad key or name; the pairing id is not used up.
    case invalid = "INVALID"
    /// Denied on the computer.
    case denied = "DENIED"
    /// The code or the approval window passed.
    case expired = "EXPIRED"
    /// Another enroll already claimed the id.
    case used = "USED"

    /// The token as printed: `OK`, `INVALID`, …
    public var token: String { rawValue }

    /// 0, 2, 3, 4, 5.
    public var exitStatus: Int32 {
        switch self {
        case .ok: 0
        case .invalid: 2
        case .denied: 3
        case .expired: 4
        case .used: 5
        }
    }
}

/// The device's request: its public key and its name, as the phone writes them on the enroll
/// command's stdin (`ssh-ed25519 <b64>\n<device name>\n`).
public struct EnrollRequest: Sendable, Equatable {
    /// An `ssh-ed25519` key blob: string "ssh-ed25519" (4 + 11) and string key (4 + 32).
    public static let keyBlobSize = 51
    /// The longest device name, in code points.
    public static let maximumNameLength = 64

    public let deviceKey: SSHPublicKey
    public let deviceName: String

    /// Checks both lines: the first must be `ssh-ed25519` and canonical base64 of a 51-byte Ed25519
    /// blob (a comment after it is ignored); the second 1–64 printable code points.
    public init(keyLine: String, nameLine: String) throws(EnrollRequestError) {
        let fields = keyLine.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, fields[0] == "ssh-ed25519" else {
            throw EnrollRequestError("The first line must be `ssh-ed25519 <base64>`")
        }
        let encoded = String(fields[1])
        guard let data = Data(base64Encoded: encoded), data.count == Self.keyBlobSize,
            data.base64EncodedString() == encoded
        else {
            throw EnrollRequestError(
                "The device key must be canonical base64 of a \(Self.keyBlobSize)-byte Ed25519 key blob")
        }
        guard let key = try? SSHPublicKey(blob: [UInt8](data)), key.algorithm == "ssh-ed25519" else {
            throw EnrollRequestError("The device key is not an Ed25519 key blob")
        }
        guard Self.isAcceptableName(nameLine) else {
            throw EnrollRequestError("The device name must be 1-\(Self.maximumNameLength) printable characters")
        }
        deviceKey = key
        deviceName = nameLine
    }

    /// 1–64 code points (what the original helper's `len` counts, and what clients cut names to), not
    /// all blank, each printable by Python's `str.isprintable` rule: no control, format (bidi
    /// overrides, zero-width), private-use, surrogate or unassigned code point, and no separator but
    /// the plain space.
    public static func isAcceptableName(_ name: String) -> Bool {
        guard (1...maximumNameLength).contains(name.unicodeScalars.count), name.contains(where: { !$0.isWhitespace })
        else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .privateUse, .surrogate, .unassigned, .lineSeparator, .paragraphSeparator: false
            default: scalar == " " || !scalar.properties.isWhitespace
            }
        }
    }

    /// The two lines again, each ending in `\n`: the form kept in the state directory.
    public var text: String { "\(deviceKey.openSSHString)\n\(deviceName)\n" }

    /// Parses ``text``.
    public init(text: String) throws(EnrollRequestError) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 3, lines[2].isEmpty else { throw EnrollRequestError("A request is exactly two lines") }
        try self.init(keyLine: String(lines[0]), nameLine: String(lines[1]))
    }
}

/// Why a request was refused; the enroll command answers `INVALID`.
public struct EnrollRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Collects the request's two lines from stdin bytes as they arrive, with the limits of interop-facts
/// §4. No I/O: the enroll command feeds it what `read` returned and asks whether it is done.
public struct EnrollLineReader: Sendable {
    /// The longest line, in bytes without its line ending.
    public static let maximumLineBytes = 1024
    /// How many lines a request has.
    public static let lineCount = 2

    public enum Result: Sendable, Equatable {
        /// Both lines (without `\n` or a trailing `\r`).
        case complete([String])
        /// Waiting for more bytes.
        case needMore
        /// A line was longer than ``maximumLineBytes``, not UTF-8, or input ended early.
        case invalid(String)
    }

    private var lines: [String] = []
    private var current: [UInt8] = []
    private var failure: String?

    public init() {}

    /// Takes the next bytes read from stdin. Bytes after the second line are ignored.
    public mutating func append(_ bytes: some Sequence<UInt8>) -> Result {
        for byte in bytes {
            if failure != nil || lines.count == Self.lineCount { break }
            if byte == UInt8(ascii: "\n") {
                finishLine()
            } else if current.count >= Self.maximumLineBytes + 1 {
                // One byte of slack for a `\r` before the `\n`.
                failure = "line \(lines.count + 1) is longer than \(Self.maximumLineBytes) bytes"
            } else {
                current.append(byte)
            }
        }
        return result
    }

    /// Input ended. A last line without its `\n` still counts.
    public mutating func finish() -> Result {
        if failure == nil, lines.count < Self.lineCount, !current.isEmpty { finishLine() }
        if failure == nil, lines.count < Self.lineCount {
            failure = "input ended after \(lines.count) of \(Self.lineCount) lines"
        }
        return result
    }

    public var result: Result {
        if let failure { return .invalid(failure) }
        return lines.count == Self.lineCount ? .complete(lines) : .needMore
    }

    private mutating func finishLine() {
        if current.last == UInt8(ascii: "\r") { current.removeLast() }
        guard current.count <= Self.maximumLineBytes else {
            failure = "line \(lines.count + 1) is longer than \(Self.maximumLineBytes) bytes"
            return
        }
        guard let text = String(validating: current, as: UTF8.self) else {
            failure = "line \(lines.count + 1) is not UTF-8"
            return
        }
        lines.append(text)
        current = []
    }
}
