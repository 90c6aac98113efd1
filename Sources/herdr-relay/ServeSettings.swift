import CLISupport
import Dispatch
import Foundation
import Glibc
import PeerGate
import RelayClient
import RelayServer
import RelayStorage
import TLS

/// `serve`'s options, checked before anything starts.
struct ServeSettings: Sendable {
    var bindAddress: String
    var port: UInt16
    var origin: String
    var databasePath: String
    var certificateFile: String?
    var keyFile: String?
    var trustProxy: Bool
    var attestationRequired: Bool

    init(_ arguments: ParsedArguments, environment: [String: String]) throws(UsageError) {
        func value(_ option: String, _ variable: String) -> String? {
            arguments.wasGiven(option) ? arguments.string(option) : environment[variable] ?? arguments.string(option)
        }
        let listen = value("listen", "RELAY_LISTEN") ?? "127.0.0.1:8787"
        guard let (host, port) = HostPort.split(listen), IPAddress(numeric: host) != nil else {
            throw arguments.usageError("--listen must be address:port with a numeric address, got \(listen)")
        }
        bindAddress = host
        self.port = port
        guard let origin = value("origin", "RELAY_ORIGIN") else {
            throw arguments.usageError("--origin is required: the https://host[:port] clients use to reach this relay")
        }
        // The same parsing clients use, so the origin they sign is the one the relay checks.
        do throws(RelayClientError) {
            self.origin = try RelayEndpoint(parsing: origin).origin
        } catch {
            throw arguments.usageError(
                "--origin must be https://host[:port] (or http:// for a loopback test) with no path, query or user: \(error)"
            )
        }
        databasePath = value("db", "RELAY_DB") ?? Self.defaultDatabasePath(environment)
        certificateFile = value("tls-cert", "RELAY_TLS_CERT")
        keyFile = value("tls-key", "RELAY_TLS_KEY")
        guard (certificateFile == nil) == (keyFile == nil) else {
            throw arguments.usageError("--tls-cert and --tls-key go together")
        }
        trustProxy = arguments.flag("trust-proxy") || environment["RELAY_TRUST_PROXY"] == "1"
        let loopback = PeerKind(peer: bindAddress) == .loopback
        if certificateFile == nil && !loopback {
            throw arguments.usageError(
                "plain WebSocket only on a loopback address (behind a TLS proxy); give --tls-cert and --tls-key to listen on \(bindAddress)"
            )
        }
        let attest =
            arguments.wasGiven("attest-required") ? arguments.string("attest-required") : environment["ATTEST_REQUIRED"]
        attestationRequired = RelayConfiguration.attestationRequired(setting: attest)
    }

    static func defaultDatabasePath(_ environment: [String: String]) -> String {
        let base =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return base + "/herdr-relay/relay.sqlite"
    }

    func run() -> ExitCode {
        let log: @Sendable (String) -> Void = { message in
            StandardError.write("\(Self.timestamp()) herdr-relay: \(message)\n")
        }
        // Watched before anything starts, so a signal at any moment ends in a clean shutdown.
        let stop = DispatchSemaphore(value: 0)
        let watcher: SignalWatcher
        do {
            watcher = try SignalWatcher(
                signals: [SIGINT, SIGTERM, SIGHUP], queue: DispatchQueue(label: "herdr-relay.signals")
            ) {
                _ in stop.signal()
            }
        } catch {
            log("error: cannot watch signals: \(error)")
            return .failure
        }
        defer { watcher.cancel() }
        let descriptors = Self.raiseOpenFilesLimit()
        if descriptors < 65_536 {
            log(
                "note: the open-files limit is \(descriptors): at most about that many sockets (raise it with ulimit -n)"
            )
        }
        var tls: TLSContext?
        if let certificateFile, let keyFile {
            do {
                tls = try TLSContext.server(certificateChainFile: certificateFile, privateKeyFile: keyFile)
            } catch {
                log("error: \(error)")
                return .failure
            }
        }
        if databasePath != ":memory:" {
            let directory = (databasePath as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try? FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        }
        let configuration = RelayConfiguration(origin: origin, attestationRequired: attestationRequired)
        let path = databasePath
        let frozen = configuration
        var options = RelayServer.Options(bindAddress: bindAddress, port: port, tls: tls)
        options.trustProxy = trustProxy
        let server: RelayServer
        do {
            server = try RelayServer(options: options) {
                let store: any RelayStore = try SQLiteRelayStore(path: path)
                return RelayCore(configuration: frozen, store: store, clock: SystemRelayClock(), log: log)
            }
        } catch {
            log("error: cannot start: \(error)")
            return .unavailable
        }
        log(
            "origin \(origin); attestation \(attestationRequired ? "required (no verifier built in: phones cannot pair; ATTEST_REQUIRED=false for a self-hosted relay)" : "off (ATTEST_REQUIRED=false)"); store \(path)\(tls == nil ? "; plain WebSocket on loopback" : "; TLS")"
        )
        let scheme = tls == nil ? "ws" : "wss"
        let host = bindAddress.contains(":") ? "[\(bindAddress)]" : bindAddress
        try? FileDescriptorWriter.writeAll(
            fd: STDOUT_FILENO, string: "herdr-relay listening on \(scheme)://\(host):\(server.port)\n")
        stop.wait()
        log("shutting down")
        server.shutdown()
        log("stopped")
        return .success
    }

    /// Every socket is a descriptor: take the soft open-files limit up to the hard one.
    static func raiseOpenFilesLimit() -> rlim_t {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return limit.rlim_cur
    }

    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}
