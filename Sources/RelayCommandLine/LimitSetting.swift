import CLISupport
import RelayProtocol
import RelayServer

/// A relay limit an operator may set, by flag or by environment variable: the original relay's
/// variables keep their names, units and defaults; the rest follow its `RELAY_` pattern. One
/// table drives `serve --help`, the parsing and the checks, so they cannot drift.
public struct LimitSetting: Sendable {
    /// The flag without dashes.
    public let flag: String
    /// The environment variable.
    public let variable: String
    /// The help sentence.
    public let help: String
    /// The unit the value is given in, for messages ("milliseconds", "bytes").
    public let unit: String
    /// The values accepted.
    public let range: ClosedRange<Int64>
    /// The relay's value when none is given.
    public let defaultValue: Int64
    /// Stores a checked value into the configuration.
    public let apply: @Sendable (inout RelayConfiguration, Int64) -> Void

    /// Every limit, in `serve --help` order.
    public static let all: [LimitSetting] = [
        LimitSetting(
            flag: "keepalive-ms", variable: "RELAY_KEEPALIVE_MS",
            help: "Milliseconds between the relay's pings; a socket that missed the last is dropped.",
            unit: "milliseconds", range: 100...86_400_000, defaultValue: RelayLimits.pingInterval * 1000
        ) { $0.pingInterval = $1 },
        LimitSetting(
            flag: "established-idle-ttl-ms", variable: "RELAY_ESTABLISHED_IDLE_TTL_MS",
            help: "Milliseconds an established room may go unused before it is reaped (whole seconds, rounded up).",
            unit: "milliseconds", range: 1...(100 * 365 * 86_400_000),
            defaultValue: RelayLimits.idleRoomLifetime * 1000
        ) { $0.idleRoomLifetime = ($1 + 999) / 1000 },
        LimitSetting(
            flag: "daily-byte-quota", variable: "RELAY_DAILY_BYTE_QUOTA",
            help: "Bytes a room may relay in a rolling 24 hours.", unit: "bytes", range: 1...(Int64(1) << 50),
            defaultValue: RelayLimits.bytesPerDay
        ) { $0.bytesPerDay = $1 },
        LimitSetting(
            flag: "max-sockets-per-ip", variable: "RELAY_MAX_SOCKETS_PER_IP",
            help: "Open WebSockets per client address.", unit: "sockets", range: 1...1_000_000,
            defaultValue: Int64(RelayLimits.socketsPerAddress)
        ) { $0.socketsPerAddress = Int($1) },
        LimitSetting(
            flag: "max-total-sockets", variable: "RELAY_MAX_TOTAL_SOCKETS",
            help: "Open WebSockets in all (503 capacity beyond).", unit: "sockets", range: 1...100_000_000,
            defaultValue: Int64(RelayLimits.maximumSockets)
        ) { $0.maximumSockets = Int($1) },
        LimitSetting(
            flag: "max-rooms", variable: "RELAY_MAX_ROOMS",
            help: "Rooms with sockets in all (503 capacity for a new one beyond).", unit: "rooms",
            range: 1...100_000_000, defaultValue: Int64(RelayLimits.maximumRooms)
        ) { $0.maximumRooms = Int($1) },
        LimitSetting(
            flag: "frames-per-second", variable: "RELAY_FRAMES_PER_SECOND",
            help: "Messages a room may relay per second (1008 frame rate exceeded beyond).", unit: "messages",
            range: 1...1_000_000, defaultValue: Int64(RelayLimits.framesPerSecond)
        ) { $0.framesPerSecond = Int($1) },
        LimitSetting(
            flag: "max-frame-bytes", variable: "RELAY_MAX_FRAME_BYTES",
            help: "Largest relayed message (1009 frame too large beyond).", unit: "bytes",
            range: 1...(64 * 1024 * 1024), defaultValue: Int64(RelayLimits.frameSize)
        ) { $0.frameSize = Int($1) },
        LimitSetting(
            flag: "upgrades-per-minute", variable: "RELAY_UPGRADES_PER_MINUTE",
            help: "WebSocket upgrades per client address per minute (429 beyond).", unit: "upgrades",
            range: 1...1_000_000, defaultValue: Int64(RelayLimits.upgradesPerMinute)
        ) { $0.upgradesPerMinute = Int($1) },
        LimitSetting(
            flag: "attest-per-minute", variable: "RELAY_ATTEST_PER_MINUTE",
            help: "/attest* requests per client address per minute (429 beyond).", unit: "requests",
            range: 1...1_000_000, defaultValue: Int64(RelayLimits.attestRequestsPerMinute)
        ) { $0.attestRequestsPerMinute = Int($1) },
        LimitSetting(
            flag: "pairing-cycles", variable: "RELAY_PAIRING_CYCLES",
            help: "Phone admissions per Mac park in a pairing room before the room is closed.", unit: "admissions",
            range: 1...1_000_000, defaultValue: Int64(RelayLimits.pairingCycles)
        ) { $0.pairingCycles = Int($1) },
    ]

    /// The option `serve` declares for it.
    public var option: OptionSpec {
        OptionSpec(flag, valueName: "n", help: "\(help) Also \(variable).", defaultValue: String(defaultValue))
    }

    /// The value text: decimal digits only (no sign, exponent or unit), within `range`.
    public func parse(_ text: String, from source: String, _ arguments: ParsedArguments) throws(UsageError) -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), trimmed.utf8.count <= 18,
            let value = Int64(trimmed), range.contains(value)
        else {
            throw arguments.usageError(
                "\(source) must be a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound), got \"\(text)\""
            )
        }
        return value
    }
}
