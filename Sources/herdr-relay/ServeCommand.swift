import CLISupport
import Dispatch
import Foundation
import Glibc
import PeerGate
import RelayServer
import RelayStorage
import TLS

/// `herdr-relay serve`: runs the relay until SIGINT or SIGTERM, then closes every socket with
/// 1001 `server shutting down` and exits 0.
enum ServeCommand {
    static let spec = CommandSpec(
        name: "serve",
        abstract: "Run the relay.",
        discussion: """
            Every option can also come from the environment: RELAY_LISTEN, RELAY_ORIGIN, RELAY_DB, \
            RELAY_TLS_CERT, RELAY_TLS_KEY, RELAY_TRUST_PROXY=1, and ATTEST_REQUIRED. Attestation fails \
            closed: only ATTEST_REQUIRED=false (exactly) turns it off, as a self-hosted relay needs, \
            since this relay has no App Attest verifier built in.

            Without --tls-cert the relay speaks plain WebSocket, and then only on a loopback address, \
            behind a TLS-terminating proxy (use --trust-proxy so per-address limits see the clients).
            """,
        options: [
            OptionSpec(
                "listen", valueName: "address:port", help: "Where to listen (IPv6 in brackets: [::]:443).",
                defaultValue: "127.0.0.1:8787"),
            OptionSpec(
                "origin", valueName: "url",
                help: "The origin clients use, https://host[:port]; bound into every join signature (required)."),
            OptionSpec(
                "db", valueName: "file", help: "SQLite database (default: $XDG_STATE_HOME/herdr-relay/relay.sqlite)."),
            OptionSpec("tls-cert", valueName: "file.pem", help: "Certificate chain (PEM) for TLS."),
            OptionSpec("tls-key", valueName: "file.pem", help: "Private key (PEM) for TLS."),
            OptionSpec(
                "attest-required", valueName: "value",
                help: "Overrides ATTEST_REQUIRED; only `false` disables attestation."),
        ],
        flags: [
            FlagSpec("trust-proxy", help: "Take client addresses from X-Forwarded-For when the peer is loopback.")
        ],
        exitCodes: [.success, .failure, .usage, .unavailable],
        handler: { arguments in
            let settings = try ServeSettings(arguments, environment: ProcessInfo.processInfo.environment)
            return await BlockingCall.run { settings.run() }
        })
}
