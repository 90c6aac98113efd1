/// A command of herdr-link's control channel, one line each:
///
///     link NAME [uplink|downlink] KEY=VALUE...   change impairments (both directions unless one is named)
///     link NAME up|blackhole|cut                 set the link's state
///     link NAME clear                            every impairment off, both directions
///     stats NAME                                 what the link passed and dropped, per direction and reason
///     show NAME                                  the link's state and impairments
///     links                                      the names of the links
///     ping                                       nothing (answers ok: a caller can wait on it)
///     quit                                       answers ok and exits
///
/// Keys: `delay=DURATION`, `jitter=DURATION` (`25ms`, `1.5s`, `250us`, `0`), `reorder=on|off`,
/// `loss=PERCENT` (`1%`), `burst=off|ENTER%,LEAVE%[,BADLOSS%[,GOODLOSS%]]` (Gilbert–Elliott; bad-state
/// loss defaults to 100%, good-state loss to 0%), `rate=off|N(bit|kbit|mbit|gbit)` (`kbit` is 1000 bits),
/// `queue=BYTES`, `bucket=BYTES` (`B`, `KiB`, `MiB` or a plain number). Keys not given keep their values.
public enum LinkCommand: Equatable, Sendable {
    case configure(link: String, direction: LinkDirectionSelector, changes: [LinkSetting])
    case setState(link: String, LinkState)
    case clear(link: String)
    case stats(link: String)
    case show(link: String)
    case links
    case ping
    case quit

    /// The longest line accepted, newline excluded.
    public static let maximumLineBytes = 4096
    /// The most settings one command may carry.
    public static let maximumSettings = 16

    /// Parses one line (without its newline).
    public init(parsing line: some StringProtocol) throws(LinkCommandError) {
        guard line.utf8.count <= Self.maximumLineBytes else {
            throw LinkCommandError("command longer than \(Self.maximumLineBytes) bytes")
        }
        let words = String(line).split(whereSeparator: { (character: Character) in character == " " || character == "\t"
        })
        .map(String.init)
        guard let verb = words.first else { throw LinkCommandError("empty command") }
        func one(_ usage: String) throws(LinkCommandError) -> String {
            guard words.count == 2 else { throw LinkCommandError("usage: \(usage)") }
            return words[1]
        }
        switch verb {
        case "stats": self = .stats(link: try one("stats NAME"))
        case "show": self = .show(link: try one("show NAME"))
        case "links", "ping", "quit":
            guard words.count == 1 else { throw LinkCommandError("\(verb) takes no arguments") }
            self = verb == "links" ? .links : verb == "ping" ? .ping : .quit
        case "link":
            guard words.count >= 3 else {
                throw LinkCommandError(
                    "usage: link NAME [uplink|downlink] KEY=VALUE... | link NAME up|blackhole|cut|clear")
            }
            let name = words[1]
            if words.count == 3, let state = LinkState(rawValue: words[2]) {
                self = .setState(link: name, state)
                return
            }
            if words.count == 3, words[2] == "clear" {
                self = .clear(link: name)
                return
            }
            var rest = words[2...]
            var direction = LinkDirectionSelector.both
            if let first = rest.first, first == "uplink" || first == "downlink" {
                direction = first == "uplink" ? .uplink : .downlink
                rest = rest.dropFirst()
            }
            guard !rest.isEmpty else { throw LinkCommandError("link \(name): no KEY=VALUE to set") }
            guard rest.count <= Self.maximumSettings else {
                throw LinkCommandError("at most \(Self.maximumSettings) settings in one command")
            }
            self = .configure(
                link: name, direction: direction,
                changes: try rest.map { word throws(LinkCommandError) in try LinkSetting(parsing: word) })
        default:
            throw LinkCommandError("unknown command \(verb.prefix(32)) (link, stats, show, links, ping, quit)")
        }
    }
}

public struct LinkCommandError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One `KEY=VALUE` of a `link` command.
public enum LinkSetting: Equatable, Sendable {
    case delay(Duration)
    case jitter(Duration)
    case reorder(Bool)
    case loss(Double)
    case burst(GilbertElliott?)
    case rate(UInt64?)
    case queue(Int)
    case bucket(Int)

    public init(parsing word: String) throws(LinkCommandError) {
        guard let equals = word.firstIndex(of: "=") else {
            throw LinkCommandError("expected KEY=VALUE, got \(word.prefix(64))")
        }
        let key = String(word[..<equals])
        let value = String(word[word.index(after: equals)...])
        func bad(_ expected: String) -> LinkCommandError {
            LinkCommandError("\(key)=\(value.prefix(64)): \(expected)")
        }
        switch key {
        case "delay", "jitter":
            guard let duration = Self.duration(value), duration <= LinkImpairments.maximumDelay else {
                throw bad("expected a duration from 0 to 60s (25ms, 1.5s, 250us, 0)")
            }
            self = key == "delay" ? .delay(duration) : .jitter(duration)
        case "reorder":
            guard value == "on" || value == "off" else { throw bad("expected on or off") }
            self = .reorder(value == "on")
        case "loss":
            guard let fraction = Self.percent(value) else { throw bad("expected a percentage from 0% to 100%") }
            self = .loss(fraction)
        case "burst":
            if value == "off" {
                self = .burst(nil)
                return
            }
            let parts = value.split(separator: ",", omittingEmptySubsequences: false).map { Self.percent(String($0)) }
            guard (2...4).contains(parts.count), parts.allSatisfy({ $0 != nil }) else {
                throw bad("expected off or ENTER%,LEAVE%[,BADLOSS%[,GOODLOSS%]]")
            }
            let numbers = parts.map { $0! }
            self = .burst(
                GilbertElliott(
                    enterBad: numbers[0], leaveBad: numbers[1], lossInBad: numbers.count > 2 ? numbers[2] : 1,
                    lossInGood: numbers.count > 3 ? numbers[3] : 0))
        case "rate":
            if value == "off" {
                self = .rate(nil)
                return
            }
            guard let rate = Self.bitRate(value), LinkImpairments.rateRange.contains(rate) else {
                throw bad("expected off or a rate from 1kbit to 100gbit (20mbit, 512kbit)")
            }
            self = .rate(rate)
        case "queue":
            guard let bytes = Self.byteCount(value), LinkImpairments.queueRange.contains(bytes) else {
                throw bad("expected a size from 1500 B to 64 MiB (256KiB, 1MiB, 65536)")
            }
            self = .queue(bytes)
        case "bucket":
            guard let bytes = Self.byteCount(value), LinkImpairments.bucketRange.contains(bytes) else {
                throw bad("expected a size from 0 to 16 MiB (1500, 64KiB)")
            }
            self = .bucket(bytes)
        default:
            throw LinkCommandError(
                "unknown key \(key.prefix(32)) (delay, jitter, reorder, loss, burst, rate, queue, bucket)")
        }
    }

    /// Applies the setting to `impairments`.
    public func apply(to impairments: inout LinkImpairments) {
        switch self {
        case .delay(let value): impairments.delay = value
        case .jitter(let value): impairments.jitter = value
        case .reorder(let value): impairments.reorder = value
        case .loss(let value): impairments.loss = value
        case .burst(let value): impairments.burst = value
        case .rate(let value): impairments.rate = value
        case .queue(let value): impairments.queueBytes = value
        case .bucket(let value): impairments.bucketBytes = value
        }
    }

    /// A decimal number without sign or exponent, at most 12 characters.
    static func decimal(_ text: Substring) -> Double? {
        guard (1...12).contains(text.count), text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            text.filter({ $0 == "." }).count <= 1, text.first != ".", text.last != "."
        else { return nil }
        return Double(text)
    }

    /// `0`, or a number with a unit of `ns`, `us`, `ms` or `s`.
    static func duration(_ text: String) -> Duration? {
        if text == "0" { return .zero }
        for (suffix, nanoseconds) in [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)] where text.hasSuffix(suffix) {
            guard let number = decimal(text.dropLast(suffix.count)) else { return nil }
            let total = (number * nanoseconds).rounded()
            guard total <= 3600e9 else { return nil }
            return .nanoseconds(Int64(total))
        }
        return nil
    }

    /// `N%` with N from 0 to 100, as a fraction.
    static func percent(_ text: String) -> Double? {
        guard text.hasSuffix("%"), let number = decimal(text.dropLast()), number <= 100 else { return nil }
        return number / 100
    }

    /// A number with `bit`, `kbit`, `mbit` or `gbit` (powers of 1000, as tc's).
    static func bitRate(_ text: String) -> UInt64? {
        let lowered = text.lowercased()
        for (suffix, scale) in [("kbit", 1e3), ("mbit", 1e6), ("gbit", 1e9), ("bit", 1.0)]
        where lowered.hasSuffix(suffix) {
            guard let number = decimal(Substring(lowered.dropLast(suffix.count))) else { return nil }
            let bits = (number * scale).rounded()
            guard bits <= 1e12 else { return nil }
            return UInt64(bits)
        }
        return nil
    }

    /// A plain number of bytes, or one with `B`, `KiB` or `MiB`.
    static func byteCount(_ text: String) -> Int? {
        let lowered = text.lowercased()
        for (suffix, scale) in [("kib", 1024.0), ("mib", 1048576.0), ("b", 1.0), ("", 1.0)]
        where lowered.hasSuffix(suffix) {
            guard let number = decimal(Substring(lowered.dropLast(suffix.count))) else { return nil }
            let bytes = (number * scale).rounded()
            guard bytes <= 1e12 else { return nil }
            return Int(bytes)
        }
        return nil
    }
}
