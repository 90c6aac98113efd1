import Foundation

/// Everything `herdr-bench wan` measured, as `.build/bench/wan.json` for scripts/plot-bench.py.
struct WanResults: Codable {
    struct Keystrokes: Codable {
        let rtt: Double
        let loss: Double
        let program: String
        /// Round trips, seconds.
        let seconds: [Double]
    }

    /// One recovery: from the event (a silent path death, a network change) to the next output on
    /// the device's screen.
    struct Recovery: Codable {
        let rtt: Double
        let loss: Double
        let program: String
        /// `owed` (a keystroke typed right after the path died), `idle`, `change`.
        let kind: String
        /// Event to the next output (the keystroke's echo when owed); nil: none within the limit.
        let seconds: Double?
        /// When each output read arrived, seconds after the event (from a second before it).
        let arrivals: [Double]
        /// The numbered lines' check (programs that resume the byte stream).
        let lost: Int?
        let repeated: Int?
        /// The first few line numbers missing and seen twice, when any.
        let missing: [Int]?
        let seenTwice: [Int]?
        let keystrokesEchoed: Int?
        let exact: Bool?
        /// The end of what the device program said on stderr (its status lines).
        let said: String
    }

    /// One timed run of a fixed-condition phase (Ctrl-C during `yes`, `cat` of 64 MiB).
    struct Run: Codable {
        let program: String
        let seconds: Double?
        /// For `cat`: whether the SHA-256 of what the device printed is the file's.
        let exact: Bool?
    }

    /// Bytes both ways on the device's links while `activity` (`top`: `top -d 1`; `idle`) ran
    /// for `seconds`.
    struct Wire: Codable {
        let program: String
        let activity: String?
        let seconds: Double
        let bytes: Int
        var bytesPerHour: Double { Double(bytes) * 3600 / seconds }
    }

    /// The computer's CPU seconds (herdr-host's or mosh-server's) while `mebibytes` MiB of output
    /// reached the device in `seconds`.
    struct Processing: Codable {
        let program: String
        let mebibytes: Int
        let cpuSeconds: Double
        let seconds: Double
    }

    var date = ""
    /// herdr-remote's roads measured, how long a recovery was waited for, and the run's length.
    var roads: [String]?
    var limit: Double?
    var minutes: Double?
    var keystrokes: [Keystrokes] = []
    var recoveries: [Recovery] = []
    var interrupts: [Run] = []
    var bulk: [Run] = []
    var wire: [Wire]? = []
    var processing: [Processing]? = []

    init() {}

    init(contentsOf url: URL) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(contentsOf: url))
    }

    func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(self).write(to: url)
    }
}
