import CLISupport
import Dispatch
import Foundation
import Glibc
import RelayCommandLine
import RelayServer
import RelayStorage
import TLS
import WebClient

extension ServeSettings {
    func run() -> ExitCode {
        let log: @Sendable (String) -> Void = { message in
            StandardError.write("\(Self.timestamp()) herdr-relay: \(message)\n")
        }
        // The web client is read before anything starts: a relay never serves half of it.
        var webClient: WebClientFiles?
        if let webRoot {
            do {
                webClient = try WebClientFiles.load(root: webRoot) { log("note: web client: skipped \($0)") }
            } catch {
                log("error: \(webClientProblem(error, root: webRoot))")
                return .usage
            }
        }
        let logsEvents = logsEvents
        let coreLog: @Sendable (RelayLogKind, String) -> Void = { kind, message in
            if kind == .failure || logsEvents { log(message) }
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
        if redis == nil { Self.createDatabaseDirectory(for: databasePath) }
        let path = databasePath
        let redis = redis
        var configured = configuration
        configured.webClient = webClient
        let frozen = configured
        var options = RelayServer.Options(bindAddress: bindAddress, port: port, tls: tls)
        options.clientAddress = clientAddress
        let server: RelayServer
        do {
            server = try RelayServer(options: options) {
                let store: any RelayStore
                if let redis {
                    let shared = try RedisRelayStore(address: redis, idleLifetime: frozen.idleRoomLifetime)
                    if let refusal = shared.presenceRefusal {
                        log(
                            "note: \(refusal): the other nodes take this node's rooms only once its heartbeat lapses (\(frozen.leaseLifetime) ms) if it dies; give its Redis user &herdr-relay:presence:* and +subscribe"
                        )
                    }
                    store = shared
                } else {
                    store = try SQLiteRelayStore(path: path)
                }
                return RelayCore(configuration: frozen, store: store, clock: SystemRelayClock(), log: coreLog)
            }
        } catch {
            log("error: cannot start: \(error)")
            return .unavailable
        }
        if tls == nil && !clientAddress.isBehindProxy {
            log(
                "note: without --trust-proxy or --trust-cloudflare, a proxy in front counts as one client: per-address limits would key on its address"
            )
        }
        let limitText = limits.map { " \($0.setting.variable)=\($0.value)" }.joined()
        log(
            "origin \(origin); attestation \(attestationRequired ? "required (App Attest: \(appAttest.appID), \(appAttest.environment.rawValue), \(appAttest.rootDescription))" : "off (ATTEST_REQUIRED=false)"); store \(redis.map(\.description) ?? path)\(tls == nil ? "; plain WebSocket" : "; TLS")\(clientAddress.logText); event log \(logsEvents ? "on" : "off")\(limits.isEmpty ? "" : ";" + limitText)"
        )
        if let webClient, let webRoot {
            // What a person loading the page can compare with what they expected to run.
            for file in webClient.sortedFiles {
                log("web client file \(file.path) sha256 \(file.sha256) (\(file.bytes.count) bytes)")
            }
            log(
                "web client on: \(webClient.files.count) files (\(webClient.totalBytes) bytes) from \(webRoot), manifest sha256 \(webClient.manifestSHA256); browsers admitted from \(origin)"
            )
        }
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

    /// What stops a start with the web client, naming the directory and the option that sets it.
    func webClientProblem(_ error: WebClientFilesError, root: String) -> String {
        switch error.kind {
        case .noRoot where !webRootGiven:
            "--web-client: no web client at \(root), the default beside this program (make install puts it there); give its directory with --web-root DIR (RELAY_WEB_ROOT)"
        case .noRoot:
            "--web-root (RELAY_WEB_ROOT): \(error.message)"
        default:
            "--web-client: the web client in \(root) cannot be served: \(error.message)"
        }
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

extension ClientAddressSource {
    /// How the start-up line describes it.
    fileprivate var logText: String {
        switch self {
        case .peer: ""
        case .forwardedFor(let hops): "; client addresses from X-Forwarded-For (hop \(hops) from the right)"
        case .cloudflare(let hops): "; client addresses from CF-Connecting-IP, else X-Forwarded-For (hop \(hops))"
        }
    }
}
