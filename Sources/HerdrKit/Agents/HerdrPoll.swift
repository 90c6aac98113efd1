import Foundation
import HerdrAgents
import HerdrBase

/// The SSH road's way to read herdr (docs/agents.md, "Over SSH"): one SSH channel runs a small
/// fixed shell loop (`HerdrPoll.command`) that reads one request a line from the device and runs
/// one of two fixed herdr commands for it, `herdr session list --json` or `herdr api snapshot
/// [--session NAME]`. What herdr prints goes out as it is, then a reply line:
///
///     #herdr-remote-reply ID STATUS STDERR
///
/// `ID` is the request's, `STATUS` herdr's exit status, `STDERR` its error output made one
/// printable line (at most 300 characters). No line of JSON can start with `#` (JSON has no `#`
/// outside strings, and a string cannot hold a raw line break), so the reply line cannot be
/// confused with herdr's output however herdr formats it. The device never sends a command: an
/// unknown request is answered with status 2 and nothing run.
public enum HerdrPoll {
    /// What the device asks.
    public enum Request: Sendable, Hashable {
        /// Answered with nothing: the first request, whose reply ends whatever a login shell
        /// printed before the loop ran.
        case hello
        /// `herdr session list --json`.
        case list
        /// `herdr api snapshot`, for the default session, or with `--session NAME`.
        case snapshot(session: String)

        /// The request line (the session name is checked by herdr's rule before it is sent).
        func line(id: String) -> String {
            switch self {
            case .hello: "\(id) hello\n"
            case .list: "\(id) list\n"
            case .snapshot(let session) where session == HerdrSessionInfo.defaultName: "\(id) snapshot\n"
            case .snapshot(let session): "\(id) snapshot \(session)\n"
            }
        }
    }

    /// One answer: what herdr printed on stdout, its exit status, and its stderr in one line.
    public struct Reply: Sendable, Hashable {
        public var id: String
        public var status: Int
        public var output: [UInt8]
        public var errorText: String

        public init(id: String, status: Int, output: [UInt8], errorText: String) {
            self.id = id
            self.status = status
            self.output = output
            self.errorText = errorText
        }

        /// herdr's error in words: its stderr, else its exit status.
        public var problem: String {
            errorText.isEmpty ? "herdr exited with status \(status)" : errorText
        }

        /// True when the shell could not find herdr (status 127, as POSIX shells report it).
        public var herdrMissing: Bool { status == 127 }
    }

    /// The reply line's first word.
    static let marker = "#herdr-remote-reply"

    /// The shell loop, POSIX sh: no `'` and no `\` in it, so it survives the two levels of
    /// quoting below in any login shell that quotes as POSIX sh or fish do.
    static let script = [
        "set -f",
        "exec 3>&1",
        "while IFS= read -r line; do",
        "set -- $line",
        "id=$1",
        "case \"$2\" in",
        "hello) e= ;;",
        "list) e=$(herdr session list --json 2>&1 >&3) ;;",
        "snapshot) if [ -n \"$3\" ]; then e=$(herdr api snapshot --session \"$3\" 2>&1 >&3);"
            + " else e=$(herdr api snapshot 2>&1 >&3); fi ;;",
        "*) e=\"unknown request\"; false ;;",
        "esac",
        "s=$?",
        "[ \"$2\" = hello ] || [ \"$2\" = list ] || [ \"$2\" = snapshot ] || s=2",
        "e=$(printf %s \"$e\" | tr -c \"[:print:]\" \" \" | cut -c 1-300)",
        "echo",
        "printf %s \"\(marker) $id $s $e\"",
        "echo",
        "done",
    ].joined(separator: "\n")

    /// The remote command: the loop in `sh`, from the account's login shell so that PATH finds
    /// herdr as it does for `connect` (a unix host; Windows has no POSIX shell to run it).
    public static var command: String {
        "exec \"$SHELL\" -lc " + HerdrCommand.posixQuoted("exec sh -c " + HerdrCommand.posixQuoted(script))
    }
}

/// Reads the poll shell's stdout into replies (`HerdrPoll`): herdr's output up to a reply line.
/// Pure: bytes in, replies out, with a bound on what one reply may hold.
public struct HerdrPollReader: Sendable {
    /// The most one reply may carry: herdr's longest line and some room.
    public static let maximumReplyBytes = HerdrJSON.maximumLineBytes + 64 * 1024

    private var buffer: [UInt8] = []
    /// Where the line being looked at starts, and where the search for its end goes on.
    private var lineStart = 0
    private var searchFrom = 0

    public init() {}

    /// More stdout. Throws when a reply grows past `maximumReplyBytes` with no reply line.
    public mutating func append(_ bytes: [UInt8]) throws(HerdrReplyError) {
        buffer += bytes
        guard buffer.count <= Self.maximumReplyBytes else {
            throw HerdrReplyError(
                "herdr printed more than \(Self.maximumReplyBytes >> 20) MiB without a reply line")
        }
    }

    /// The next whole reply, if one arrived.
    public mutating func next() -> HerdrPoll.Reply? {
        let marker = Array((HerdrPoll.marker + " ").utf8)
        while true {
            guard let newline = buffer[max(lineStart, searchFrom)...].firstIndex(of: UInt8(ascii: "\n")) else {
                searchFrom = buffer.count
                return nil
            }
            let line = buffer[lineStart..<newline]
            guard line.starts(with: marker) else {
                lineStart = newline + 1
                continue
            }
            let fields = String(decoding: line.dropFirst(marker.count), as: UTF8.self)
                .split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            var output = Array(buffer[..<lineStart])
            while output.last == UInt8(ascii: "\n") { output.removeLast() }
            buffer.removeFirst(newline + 1)
            lineStart = 0
            searchFrom = 0
            guard fields.count >= 2, let status = Int(fields[1]) else { continue }
            return HerdrPoll.Reply(
                id: String(fields[0]), status: status, output: output,
                errorText: fields.count > 2 ? String(fields[2]).trimmingCharacters(in: .whitespaces) : "")
        }
    }
}
