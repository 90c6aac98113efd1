import Foundation
import HerdrKit

/// The restricted authorized_keys line that lets the one-time key run the enroll command once
/// (interop-facts §4):
///
///     restrict,expiry-time="YYYYMMDDHHMMSS",from="100.64.0.0/10,fd7a:115c:a1e0::/48,127.0.0.1,::1",command="<helper> --enroll=<id> --state=<dir>" ssh-ed25519 <b64> herdr-pair:<id>
///
/// `restrict` turns off forwarding, agent, X11 and PTY; `expiry-time` (local time) makes sshd refuse
/// the key afterwards even if the line were left behind; `from=` admits the tailnet and loopback only;
/// `command=` replaces whatever the client asks to run.
public struct OneTimeKeyLine: Sendable, Equatable {
    /// The comment that marks a line as a herdr-pair one-time key: `herdr-pair:<id>`.
    public static let commentPrefix = "herdr-pair:"
    /// Where the one-time key is accepted from: the tailnet ranges and loopback.
    public static let allowedSources = "100.64.0.0/10,fd7a:115c:a1e0::/48,127.0.0.1,::1"

    public var pairingID: PairingID
    /// When sshd stops accepting the key (written in whole seconds, local time).
    public var expiresAt: Date
    /// The absolute path of the helper sshd runs (`herdr-pair`).
    public var helperPath: String
    /// The pairing's state directory, passed to the enroll command.
    public var stateDirectory: String
    public var publicKey: SSHPublicKey

    /// A line for these values.
    ///
    /// - Throws: ``HostError`` (`invalidPath`) when a path cannot travel inside `command="…"`: not
    ///   absolute, or holding a quote, a backslash or a control character.
    public init(
        pairingID: PairingID, expiresAt: Date, helperPath: String, stateDirectory: String, publicKey: SSHPublicKey
    ) throws(HostError) {
        for path in [helperPath, stateDirectory] {
            guard path.hasPrefix("/"), Self.shellWord(path) != nil else {
                throw HostError(
                    .invalidPath,
                    "The path \(path) cannot be used in a forced command (it must be absolute, without quotes, "
                        + "backslashes or control characters)")
            }
        }
        self.pairingID = pairingID
        self.expiresAt = expiresAt
        self.helperPath = helperPath
        self.stateDirectory = stateDirectory
        self.publicKey = publicKey
    }

    /// The forced command: `<helper> --enroll=<id> --state=<dir>`, paths single-quoted only when they
    /// hold characters a shell would split or expand.
    public var command: String {
        "\(Self.shellWord(helperPath)!) --enroll=\(pairingID.text) --state=\(Self.shellWord(stateDirectory)!)"
    }

    /// The comment: `herdr-pair:<id>`.
    public var comment: String { Self.commentPrefix + pairingID.text }

    /// The whole line, without a newline.
    public var text: String {
        "restrict,expiry-time=\"\(LocalTime.expiryTimeString(expiresAt))\",from=\"\(Self.allowedSources)\","
            + "command=\"\(command)\" \(publicKey.openSSHString) \(comment)"
    }

    /// `word` as one shell word: bare when it holds only `[A-Za-z0-9/._+@%:,=-]`, else in single
    /// quotes; nil when it holds `'`, `"`, `\` or a control character (none of which we quote).
    static func shellWord(_ word: String) -> String? {
        guard !word.isEmpty else { return nil }
        var bare = true
        for scalar in word.unicodeScalars {
            if scalar == "'" || scalar == "\"" || scalar == "\\" || scalar.properties.generalCategory == .control {
                return nil
            }
            if !(scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "/._+@%:,=-".unicodeScalars.contains(scalar)))
            {
                bare = false
            }
        }
        return bare ? word : "'\(word)'"
    }
}

/// What the sweep needs from any herdr-pair one-time line, ours or the original helper's: the id, the
/// expiry, and the state directory of the helper that wrote it.
public struct OneTimeKeyLineInfo: Sendable, Equatable {
    public var pairingID: PairingID
    /// nil when the line carries no `expiry-time` sshd would read.
    public var expiresAt: Date?
    /// The `--state=` argument of the forced command, unquoted; nil when there is none.
    public var stateDirectory: String?

    /// Recognises a one-time line: comment `herdr-pair:<id>` with a well-formed id, and a `command=`
    /// option that runs `--enroll=<the same id>`. nil for every other line.
    public init?(line: String) {
        guard let entry = AuthorizedKeysEntry(line: line), entry.comment.hasPrefix(OneTimeKeyLine.commentPrefix),
            let id = PairingID(text: String(entry.comment.dropFirst(OneTimeKeyLine.commentPrefix.count))),
            let command = entry.option("command")?.value
        else { return nil }
        let words = Self.shellWords(command)
        guard words.contains("--enroll=\(id.text)") else { return nil }
        pairingID = id
        expiresAt = entry.option("expiry-time")?.value.flatMap(LocalTime.parseExpiryTime)
        stateDirectory = words.first { $0.hasPrefix("--state=") }.map { String($0.dropFirst("--state=".count)) }
    }

    /// Splits a command at blanks, honouring single and double quotes (no escapes: our lines hold none).
    static func shellWords(_ command: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        for character in command {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }
}

/// The line written for an approved device (interop-facts §4):
/// `ssh-ed25519 <b64> herdr-ios:<safe-name>:<YYYY-MM-DD>`.
public enum DeviceKeyLine {
    public static let commentPrefix = "herdr-ios:"

    /// The line for `key`, named after the device, dated `date` (local).
    public static func text(key: SSHPublicKey, deviceName: String, date: Date) -> String {
        "\(key.openSSHString) \(commentPrefix)\(safeName(deviceName)):\(LocalTime.dateString(date))"
    }

    /// The device name for the comment: every run of characters outside `[A-Za-z0-9._@-]` becomes one `-`.
    public static func safeName(_ name: String) -> String {
        var out = ""
        var inRun = false
        for scalar in name.unicodeScalars {
            let allowed =
                scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || "._@-".unicodeScalars.contains(scalar))
            if allowed {
                out.unicodeScalars.append(scalar)
                inRun = false
            } else if !inRun {
                out.append("-")
                inRun = true
            }
        }
        return out
    }
}
