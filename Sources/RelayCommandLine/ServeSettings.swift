import AppAttest
import CLISupport
import Foundation
import PeerGate
import Plumbing
import RelayClient
import RelayServer
import RelayStorage
import WebClient

/// `serve`'s options, checked before anything starts. Each comes from its flag, else from its
/// environment variable (the original relay's names, so its env file works unchanged), else its
/// default. An empty variable counts as unset; a value that cannot be parsed is a usage error.
public struct ServeSettings: Sendable {
    /// The numeric address to listen on.
    public var bindAddress: String
    /// The port to listen on (0: any).
    public var port: UInt16
    /// The origin clients use, as `RelayEndpoint` writes it.
    public var origin: String
    /// The SQLite file (unused with ``redis``).
    public var databasePath: String
    /// The Redis every node of a cluster shares (`--store`, `RELAY_REDIS_URL`); nil: the SQLite file.
    public var redis: RedisAddress?
    /// The TLS certificate chain (PEM); nil: plain WebSocket.
    public var certificateFile: String?
    /// The TLS private key (PEM), given with ``certificateFile``.
    public var keyFile: String?
    /// Where client addresses come from.
    public var clientAddress: ClientAddressSource
    /// Whether phones must attest (`ATTEST_REQUIRED`, failing closed).
    public var attestationRequired: Bool
    /// The App Attest evidence accepted (`APP_ID`, `APPATTEST_ENV`, `APPATTEST_ROOT_PEM`).
    public var appAttest: AppAttestPolicy
    /// Whether event lines are logged (`RELAY_LOG`); failures always are.
    public var logsEvents: Bool
    /// The limits given, with their values.
    public var limits: [(setting: LimitSetting, value: Int64)]
    /// Where the web client's files are when the relay serves them (`--web-client`,
    /// `RELAY_WEB_CLIENT`): `--web-root` (`RELAY_WEB_ROOT`), else ``WebClientFiles/installedRoot(executable:)``;
    /// nil when it does not.
    public var webRoot: String?
    /// Whether ``webRoot`` was given (`--web-root`, `RELAY_WEB_ROOT`) rather than the default.
    public var webRootGiven: Bool

    /// Reads `serve`'s parsed arguments, then `environment`; throws the usage error for a value
    /// that cannot be used. `executable` is this program's path, for the web client's default
    /// directory beside it.
    public init(
        _ arguments: ParsedArguments, environment: [String: String],
        executable: @autoclosure () -> String = WebClientFiles.executablePath()
    ) throws(UsageError) {
        func variable(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        func value(_ option: String, _ name: String) -> String? {
            arguments.wasGiven(option) ? arguments.string(option) : variable(name) ?? arguments.string(option)
        }
        func boolean(_ flag: String, _ name: String) throws(UsageError) -> Bool {
            if arguments.flag(flag) { return true }
            switch variable(name) {
            case nil, "false", "0": return false
            case "true", "1": return true
            case let other?: throw arguments.usageError("\(name) must be true or false, got \"\(other)\"")
            }
        }
        (bindAddress, port) = try Self.listenAddress(arguments, variable)
        guard let origin = value("origin", "RELAY_ORIGIN") else {
            throw arguments.usageError(
                "--origin (or RELAY_ORIGIN) is required: the https://host[:port] clients use to reach this relay")
        }
        // The same parsing clients use, so the origin they sign is the one the relay checks.
        do throws(ConnectionError) {
            self.origin = try RelayEndpoint(parsing: origin).origin
        } catch {
            throw arguments.usageError(
                "--origin must be https://host[:port] (or http:// for a loopback test) with no path, query or user: \(error)"
            )
        }
        databasePath = value("db", "RELAY_DB") ?? Self.defaultDatabasePath(environment)
        redis = try Self.redisAddress(arguments, variable)
        certificateFile = value("tls-cert", "RELAY_TLS_CERT")
        keyFile = value("tls-key", "RELAY_TLS_KEY")
        guard (certificateFile == nil) == (keyFile == nil) else {
            throw arguments.usageError("--tls-cert and --tls-key go together")
        }
        let trustProxy = try boolean("trust-proxy", "RELAY_TRUST_PROXY")
        let trustCloudflare = try boolean("trust-cloudflare", "RELAY_TRUST_CLOUDFLARE")
        guard !(trustProxy && trustCloudflare) else {
            throw arguments.usageError(
                "trust one proxy header: --trust-proxy (RELAY_TRUST_PROXY) or --trust-cloudflare (RELAY_TRUST_CLOUDFLARE), not both"
            )
        }
        var hops = 1
        if let text = value("trusted-hops", "RELAY_TRUSTED_HOPS") {
            guard let parsed = Int(text), (1...16).contains(parsed) else {
                throw arguments.usageError("--trusted-hops (RELAY_TRUSTED_HOPS) must be 1 to 16, got \"\(text)\"")
            }
            hops = parsed
        }
        clientAddress = trustCloudflare ? .cloudflare(hops: hops) : trustProxy ? .forwardedFor(hops: hops) : .peer
        if certificateFile == nil && PeerKind(peer: bindAddress) != .loopback && !clientAddress.isBehindProxy {
            throw arguments.usageError(
                "plain WebSocket only on a loopback address or behind a proxy (--trust-proxy, --trust-cloudflare); give --tls-cert and --tls-key to listen on \(bindAddress)"
            )
        }
        let attest =
            arguments.wasGiven("attest-required") ? arguments.string("attest-required") : environment["ATTEST_REQUIRED"]
        attestationRequired = RelayConfiguration.attestationRequired(setting: attest)
        appAttest = try Self.appAttestPolicy(arguments, value)
        logsEvents = try boolean("log", "RELAY_LOG")
        var limits: [(LimitSetting, Int64)] = []
        for setting in LimitSetting.all {
            if arguments.wasGiven(setting.flag), let text = arguments.string(setting.flag) {
                limits.append((setting, try setting.parse(text, from: "--\(setting.flag)", arguments)))
            } else if let text = variable(setting.variable) {
                limits.append((setting, try setting.parse(text, from: setting.variable, arguments)))
            }
        }
        self.limits = limits
        if try boolean("web-client", "RELAY_WEB_CLIENT") {
            let given = value("web-root", "RELAY_WEB_ROOT")
            webRoot = given ?? WebClientFiles.installedRoot(executable: executable())
            webRootGiven = given != nil
        } else {
            // The variable may stay in an env file while the web client is switched off; the flag alone
            // is a mistake.
            guard !arguments.wasGiven("web-root") else {
                throw arguments.usageError("--web-root needs --web-client (or RELAY_WEB_CLIENT=true)")
            }
            webRoot = nil
            webRootGiven = false
        }
    }

    /// `--listen`, else `RELAY_LISTEN`, else upstream's `RELAY_HOST` and `RELAY_PORT` (or `PORT`),
    /// defaulting to 127.0.0.1:8787 as upstream does.
    private static func listenAddress(_ arguments: ParsedArguments, _ variable: (String) -> String?) throws(UsageError)
        -> (String, UInt16)
    {
        let listen: String
        if arguments.wasGiven("listen"), let given = arguments.string("listen") {
            listen = given
        } else if let given = variable("RELAY_LISTEN") {
            guard variable("RELAY_HOST") == nil && variable("RELAY_PORT") == nil else {
                throw arguments.usageError("RELAY_LISTEN and RELAY_HOST/RELAY_PORT are both set: keep one")
            }
            listen = given
        } else {
            var host = variable("RELAY_HOST") ?? "127.0.0.1"
            if host == "localhost" { host = "127.0.0.1" }
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard IPAddress(numeric: host) != nil else {
                throw arguments.usageError("RELAY_HOST must be a numeric address (or localhost), got \"\(host)\"")
            }
            let portText = variable("RELAY_PORT") ?? variable("PORT") ?? "8787"
            guard let port = UInt16(portText) else {
                throw arguments.usageError("RELAY_PORT must be a port number from 0 to 65535, got \"\(portText)\"")
            }
            return (host, port)
        }
        guard let (host, port) = HostPort.split(listen), IPAddress(numeric: host) != nil else {
            throw arguments.usageError("--listen must be address:port with a numeric address, got \(listen)")
        }
        return (host, port)
    }

    /// `--app-id` (`APP_ID`), `--appattest-env` (`APPATTEST_ENV`) and `--appattest-root`
    /// (`APPATTEST_ROOT_PEM`: PEM text as the original takes it, or a PEM file's path), each
    /// checked now so a relay never starts with evidence it could not check.
    static func appAttestPolicy(_ arguments: ParsedArguments, _ value: (String, String) -> String?) throws(UsageError)
        -> AppAttestPolicy
    {
        var policy = AppAttestPolicy.iTerm2Buddy
        if let appID = value("app-id", "APP_ID") {
            guard Self.isAppID(appID) else {
                throw arguments.usageError(
                    "--app-id (APP_ID) must be a team-prefixed app id such as \(AppAttestPolicy.iTerm2BuddyAppID), got \"\(appID)\""
                )
            }
            policy.appID = appID
        }
        if let text = value("appattest-env", "APPATTEST_ENV") {
            guard let environment = AppAttestPolicy.Environment(rawValue: text) else {
                throw arguments.usageError(
                    "--appattest-env (APPATTEST_ENV) must be production or development, got \"\(text)\"")
            }
            policy.environment = environment
        }
        if let root = value("appattest-root", "APPATTEST_ROOT_PEM") {
            var pem = root
            if !root.contains("-----BEGIN") {
                do {
                    pem = try String(contentsOfFile: root, encoding: .utf8)
                } catch {
                    throw arguments.usageError(
                        "--appattest-root (APPATTEST_ROOT_PEM) is neither PEM text nor a readable PEM file: \(root)")
                }
            }
            do throws(AppAttestFailure) {
                policy.root = try X509Certificate(pem: pem)
            } catch {
                throw arguments.usageError("--appattest-root (APPATTEST_ROOT_PEM): \(error.message)")
            }
        }
        return policy
    }

    /// A team id (10 upper-case letters or digits), a dot, and a bundle id.
    static func isAppID(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, text.utf8.count <= 255, parts[0].count == 10, !parts[1].isEmpty else { return false }
        return parts[0].allSatisfy { ($0.isASCII && $0.isUppercase) || $0.isWholeNumber && $0.isASCII }
            && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }

    /// `--store`, else `RELAY_REDIS_URL` unless `--db` was given; one store, never both.
    public static func redisAddress(_ arguments: ParsedArguments, _ variable: (String) -> String?) throws(UsageError)
        -> RedisAddress?
    {
        let text: String
        if arguments.wasGiven("store"), let given = arguments.string("store") {
            guard !arguments.wasGiven("db") else {
                throw arguments.usageError("--db (SQLite) and --store (Redis) name two stores: give one")
            }
            text = given
        } else if !arguments.wasGiven("db"), let given = variable("RELAY_REDIS_URL") {
            guard variable("RELAY_DB") == nil else {
                throw arguments.usageError("RELAY_DB and RELAY_REDIS_URL are both set: keep one")
            }
            text = given
        } else {
            return nil
        }
        do throws(RelayStoreError) {
            return try RedisAddress(url: text)
        } catch {
            throw arguments.usageError("--store (RELAY_REDIS_URL): \(error.message)")
        }
    }

    /// The relay's configuration: the origin, attestation and every limit given.
    public var configuration: RelayConfiguration {
        var configuration = RelayConfiguration(origin: origin, attestationRequired: attestationRequired)
        configuration.appAttest = appAttest
        for (setting, value) in limits { setting.apply(&configuration, value) }
        return configuration
    }

    /// The store's directory, made 0700 when absent (the store itself is made 0600 by its opener).
    public static func createDatabaseDirectory(for path: String) {
        guard path != ":memory:" else { return }
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty else { return }
        try? FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// `$XDG_STATE_HOME/herdr-relay/relay.sqlite` (an absolute XDG_STATE_HOME), else under `$HOME/.local/state`.
    public static func defaultDatabasePath(_ environment: [String: String]) -> String {
        let base =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return base + "/herdr-relay/relay.sqlite"
    }
}
