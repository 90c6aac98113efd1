import CLISupport
import PeerGate
import RelayClient
import RelayCommandLine
import RelayStorage

extension FuzzTargets {
    /// herdr-relay serve's configuration. The input is NUL-separated words; the first byte says how
    /// many of them are command-line arguments, the rest are `NAME=value` environment entries. They
    /// go through the CLISupport parser with serve's own spec, then `ServeSettings`: a usage error
    /// with a message, help, or settings that keep serve's documented rules: a numeric listen
    /// address, plain WebSocket only on loopback or behind a proxy, the TLS files together, an
    /// origin that parses back to itself, a Redis address whose description parses, each limit
    /// once and within its range.
    static let relaySettings = FuzzTarget("relay-settings", "herdr-relay serve: flags and environment") { data in
        guard let first = data.first else { return }
        let words = data.dropFirst().split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        let argumentCount = min(words.count, Int(first))
        let arguments = Array(words.prefix(argumentCount))
        var environment: [String: String] = [:]
        for entry in words.dropFirst(argumentCount) {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            environment[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        let parsed: ParsedArguments
        do throws(UsageError) {
            switch try CommandParser.parse(arguments, spec: RelaySettingsSpec.serve) {
            case .run(_, let given): parsed = given
            case .help(let text):
                FuzzCheck.expect(text.contains("--origin"), "help without the options")
                return
            case .version: return
            }
        } catch {
            FuzzCheck.expect(!error.message.isEmpty, "a usage error without a message")
            return
        }
        do throws(UsageError) {
            let settings = try ServeSettings(parsed, environment: environment)
            FuzzCheck.expect(IPAddress(numeric: settings.bindAddress) != nil, "a listen address not numeric")
            FuzzCheck.expect(
                (settings.certificateFile == nil) == (settings.keyFile == nil), "one TLS file without the other")
            FuzzCheck.expect(
                settings.certificateFile != nil || settings.clientAddress.isBehindProxy
                    || PeerKind(peer: settings.bindAddress) == .loopback,
                "plain WebSocket on \(settings.bindAddress) without a proxy")
            FuzzCheck.expect(
                (try? RelayEndpoint(parsing: settings.origin).origin) == settings.origin,
                "the origin does not parse back: \(settings.origin)")
            if let redis = settings.redis {
                FuzzCheck.expect((try? RedisAddress(url: redis.description)) != nil, "the store's description")
            }
            FuzzCheck.expect(
                Set(settings.limits.map(\.setting.variable)).count == settings.limits.count, "a limit twice")
            for (setting, value) in settings.limits {
                FuzzCheck.expect(setting.range.contains(value), "\(setting.variable)=\(value) out of range")
            }
            _ = settings.configuration
        } catch {
            FuzzCheck.expect(!error.message.isEmpty, "a usage error without a message")
        }
    }
}

/// serve's spec, whose handler the fuzzer never runs.
enum RelaySettingsSpec {
    static let serve = ServeCommandLine.spec { _ in .success }
}
