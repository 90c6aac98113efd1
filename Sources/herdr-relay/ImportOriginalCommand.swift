import CLISupport
import Foundation
import Glibc
import RelayCommandLine
import RelayProtocol
import RelayServer
import RelayStorage

/// `herdr-relay import-original FILE`: carries the original relay's established rooms into this
/// relay's store, so that a move from the original needs no user to pair again.
enum ImportOriginalCommand {
    static let someRefused = ExitCode(3, meaning: "import-original: some rooms were refused; the rest were carried.")

    static let spec = CommandSpec(
        name: "import-original",
        abstract: "Carry the original relay's established rooms into this relay's store.",
        discussion: """
            FILE is the original relay's SQLite database (its RELAY_DB, relay.db by default), read \
            and never written. Every room with a registered verifier and used within the idle TTL \
            is carried with its verifier, last activity and quota, so its devices join here with \
            the keys they have. Pairings that never finished and rooms idle past the TTL are left \
            behind, as are the short-lived tickets, tokens and challenges.

            Run it again at any time: a room already here with the same verifier is kept, one held \
            here with another verifier is refused and never overwritten. A room whose rows are not \
            what the original writes is refused by name, and nothing of it is written. The store \
            may be in use by a running herdr-relay serve.

            Examples:
              herdr-relay import-original /var/lib/iterm2-companion-relay/relay.db --dry-run
              herdr-relay import-original /var/lib/iterm2-companion-relay/relay.db --db /var/lib/herdr-relay/relay.sqlite
              RELAY_REDIS_URL=redis://10.1.0.5:6379/0 herdr-relay import-original /var/lib/iterm2-companion-relay/relay.db
            """,
        arguments: [PositionalSpec("file", help: "The original relay's SQLite file.", completion: .files)],
        options: [
            OptionSpec(
                "db", valueName: "file",
                help: "This relay's store (default: RELAY_DB, else $XDG_STATE_HOME/herdr-relay/relay.sqlite).",
                completion: .files),
            OptionSpec(
                "store", valueName: "url",
                help: "The Redis of a cluster instead (RELAY_REDIS_URL): redis://HOST:PORT/DB or unix:///PATH."),
            idleSetting.option,
        ],
        flags: [FlagSpec("dry-run", help: "Report what would be carried; write nothing.")],
        exitCodes: [.success, .failure, someRefused, .usage, .noInput],
        handler: { arguments in
            let request = try Request(arguments, environment: ProcessInfo.processInfo.environment)
            return await BlockingCall.run { request.run() }
        })

    static let idleSetting: LimitSetting = {
        guard let setting = LimitSetting.all.first(where: { $0.variable == "RELAY_ESTABLISHED_IDLE_TTL_MS" }) else {
            preconditionFailure("the idle TTL is one of the limits")
        }
        return setting
    }()

    /// The command line, checked before anything is opened.
    struct Request: Sendable {
        var source: String
        var destination: String
        /// The cluster's Redis (`--store`, `RELAY_REDIS_URL`); nil: the SQLite file `destination`.
        var redis: RedisAddress?
        /// Seconds.
        var idleLifetime: Int64
        var dryRun: Bool

        init(_ arguments: ParsedArguments, environment: [String: String]) throws(UsageError) {
            source = arguments.positional("file") ?? ""
            let variable = environment["RELAY_DB"].flatMap { $0.isEmpty ? nil : $0 }
            redis = try ServeSettings.redisAddress(arguments) { name in
                environment[name].flatMap { $0.isEmpty ? nil : $0 }
            }
            destination =
                redis?.description ?? arguments.string("db") ?? variable
                ?? ServeSettings.defaultDatabasePath(environment)
            guard destination != ":memory:" else { throw arguments.usageError("--db must be a file, not :memory:") }
            var configuration = RelayConfiguration(origin: "https://import.invalid", attestationRequired: true)
            let setting = ImportOriginalCommand.idleSetting
            if arguments.wasGiven(setting.flag), let text = arguments.string(setting.flag) {
                setting.apply(&configuration, try setting.parse(text, from: "--\(setting.flag)", arguments))
            } else if let text = environment[setting.variable], !text.isEmpty {
                setting.apply(&configuration, try setting.parse(text, from: setting.variable, arguments))
            }
            idleLifetime = configuration.idleRoomLifetime
            dryRun = arguments.flag("dry-run")
            if redis == nil, Self.sameFile(source, destination) {
                throw arguments.usageError(
                    "\(source) is both the original's file and this relay's store; give this relay's store with --db")
            }
        }

        static func sameFile(_ a: String, _ b: String) -> Bool {
            var first = stat()
            var second = stat()
            guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
            return first.st_dev == second.st_dev && first.st_ino == second.st_ino
        }

        func run() -> ExitCode {
            let original: OriginalRelayDatabase
            do {
                original = try OriginalRelayDatabase(path: source)
            } catch {
                StandardError.write("error: cannot read the original relay's database: \(error)\n")
                return .noInput
            }
            let report: OriginalRelayImport.Report
            do {
                let store: any RelayStore
                if let redis {
                    store = try RedisRelayStore(address: redis, idleLifetime: idleLifetime)
                } else if dryRun, !FileManager.default.fileExists(atPath: destination) {
                    store = MemoryRelayStore()
                } else {
                    ServeSettings.createDatabaseDirectory(for: destination)
                    store = try SQLiteRelayStore(path: destination)
                }
                print(
                    dryRun
                        ? "checking \(source) against \(destination) (dry run: nothing is written)"
                        : "importing \(source) into \(destination)")
                report = try OriginalRelayImport.run(
                    from: original, into: store, now: Int64(time(nil)), idleLifetime: idleLifetime, dryRun: dryRun)
            } catch {
                StandardError.write("error: the import stopped: \(error)\n")
                return .failure
            }
            for refusal in report.refused {
                print("refused room \(refusal.room): \(refusal.reason)")
            }
            let verb = dryRun ? "would carry" : "carried"
            print(
                "\(verb) \(report.carried + report.alreadyPresent) established room(s) (\(report.alreadyPresent) already here); "
                    + "skipped \(report.expired) idle past the TTL and \(report.notEstablished) never established; "
                    + "refused \(report.refused.count)")
            return report.refused.isEmpty ? .success : ImportOriginalCommand.someRefused
        }
    }
}
