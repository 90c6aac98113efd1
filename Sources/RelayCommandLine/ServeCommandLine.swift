import CLISupport

/// `herdr-relay serve`'s command line: its options, flags and help, which `herdr-relay` runs and
/// the fuzzer parses, so both read a command line the same way.
public enum ServeCommandLine {
    /// The `serve` subcommand, running `handler` with the parsed arguments.
    public static func spec(handler: @escaping CommandSpec.Handler) -> CommandSpec {
        CommandSpec(
            name: "serve",
            abstract: "Run the relay.",
            discussion: """
                Every option can also come from the environment, with the original relay's names so its \
                env file works unchanged: RELAY_ORIGIN, RELAY_HOST and RELAY_PORT (or RELAY_LISTEN), \
                RELAY_DB (or RELAY_REDIS_URL), RELAY_TLS_CERT, RELAY_TLS_KEY, RELAY_TRUST_PROXY=true, RELAY_TRUST_CLOUDFLARE=true, \
                RELAY_TRUSTED_HOPS, RELAY_LOG=true, ATTEST_REQUIRED, APP_ID, APPATTEST_ENV, APPATTEST_ROOT_PEM, and each \
                limit's variable below. A flag \
                wins over its variable; an empty variable counts as unset; a value that cannot be parsed \
                stops the relay before it starts (exit 64).

                Attestation fails closed: only ATTEST_REQUIRED=false (exactly) turns it off. While it is \
                on, a phone pairs only after App Attest vouches for it: its key attested by Apple for \
                APP_ID (iTerm2 Buddy's by default) in APPATTEST_ENV (production by default), chained \
                to APPATTEST_ROOT_PEM (Apple's App Attestation root by default), then an assertion by \
                that key at /register. A self-hosted relay for apps that cannot attest (herdr-remote, \
                forks signed by another team) runs with ATTEST_REQUIRED=false.

                Without --tls-cert the relay speaks plain WebSocket: on a loopback address, or on any \
                address behind a TLS-terminating proxy that --trust-proxy or --trust-cloudflare names, \
                so per-address limits see the clients rather than the proxy.

                The relay logs no room names and no client addresses; event lines (a room established, \
                rooms reaped) only with --log (RELAY_LOG=true), failures always.

                Several relay nodes behind one balancer share one Redis (--store redis://…): rooms, \
                verifiers, tickets and quotas live there. A node that cannot reach Redis refuses new \
                sockets and requests (503 `store unavailable`, or close 1011 `store unavailable`) while \
                splices already running go on, reports 503 on /healthz, and recovers by itself when \
                Redis is back. Put a password in RELAY_REDIS_URL rather than on the command line.

                With --web-client (RELAY_WEB_CLIENT=true) the relay also serves the web client, the page a \
                phone's browser pairs and connects from, at its origin: the files under --web-root \
                (RELAY_WEB_ROOT; default: ../share/herdr-remote/web from the program's directory, where \
                make install puts them), read once at start (at most 8 MiB) and logged with their SHA-256 \
                and one manifest SHA-256. Requests whose Origin is exactly --origin are then admitted, \
                with the room as the query parameter room (/?room=…) where a browser cannot send \
                x-relay-room; any other Origin is still refused (403 forbidden). Without it, as the \
                original relay, every request with an Origin is refused. Whoever serves the page \
                serves the code that holds the phone's keys: serve it only from a relay you trust.
                """,
            options: [
                OptionSpec(
                    "listen", valueName: "address:port", help: "Where to listen (IPv6 in brackets: [::]:443).",
                    defaultValue: "127.0.0.1:8787"),
                OptionSpec(
                    "origin", valueName: "url",
                    help: "The origin clients use, https://host[:port]; bound into every join signature (required)."),
                OptionSpec(
                    "db", valueName: "file",
                    help: "SQLite database (default: $XDG_STATE_HOME/herdr-relay/relay.sqlite).", completion: .files),
                OptionSpec(
                    "store", valueName: "url",
                    help:
                        "Redis shared by several nodes instead: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or unix:///PATH[?db=N]."
                ),
                OptionSpec(
                    "tls-cert", valueName: "file.pem", help: "Certificate chain (PEM) for TLS.", completion: .files),
                OptionSpec("tls-key", valueName: "file.pem", help: "Private key (PEM) for TLS.", completion: .files),
                OptionSpec(
                    "attest-required", valueName: "value",
                    help: "Overrides ATTEST_REQUIRED; only `false` disables attestation.",
                    completion: .values(["true", "false"])),
                OptionSpec(
                    "app-id", valueName: "TEAMID.bundle.id",
                    help: "The app whose attested keys may pair (APP_ID).",
                    defaultValue: "H7V7XYVQ7D.com.googlecode.iterm2.companion"),
                OptionSpec(
                    "appattest-env", valueName: "env", help: "production or development (APPATTEST_ENV).",
                    defaultValue: "production", completion: .values(["production", "development"])),
                OptionSpec(
                    "appattest-root", valueName: "pem",
                    help: "The App Attest trust anchor, PEM text or a PEM file (APPATTEST_ROOT_PEM; default: Apple's).",
                    completion: .files),
                OptionSpec(
                    "trusted-hops", valueName: "n",
                    help: "Appending proxies in front: X-Forwarded-For is read this many from the right.",
                    defaultValue: "1"),
                OptionSpec(
                    "web-root", valueName: "dir",
                    help:
                        "The web client's files, with --web-client (RELAY_WEB_ROOT; default: ../share/herdr-remote/web from the program).",
                    completion: .directories),
            ] + LimitSetting.all.map(\.option),
            flags: [
                FlagSpec("trust-proxy", help: "Take client addresses from X-Forwarded-For (a proxy in front sets it)."),
                FlagSpec(
                    "trust-cloudflare",
                    help: "Take client addresses from CF-Connecting-IP, then X-Forwarded-For (Cloudflare in front)."),
                FlagSpec("log", help: "Log events (a room established, rooms reaped); never names or addresses."),
                FlagSpec(
                    "web-client",
                    help: "Serve the web client and admit browsers from --origin (RELAY_WEB_CLIENT=true)."),
            ],
            exitCodes: [.success, .failure, .usage, .unavailable],
            handler: handler)
    }
}
