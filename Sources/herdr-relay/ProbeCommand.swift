import CLISupport
import Foundation
import Glibc
import RelayClient
import RelayCommandLine

/// `herdr-relay probe URL`: checks a relay end to end, as a client sees it.
enum ProbeCommand {
    static let misbehaves = ExitCode(3, meaning: "The relay answered, but not as a relay protocol v1 server should.")

    static let spec = CommandSpec(
        name: "probe",
        abstract: "Check that a relay speaks protocol v1: health, challenge, admission, splice.",
        discussion: """
            Runs, in fresh random rooms: GET /healthz; POST /attest/challenge; a dummy POST /attest \
            (400 "attestation disabled" means open mode); a Mac parking and a phone joining (in open \
            mode a 64-byte frame each way, with the round trip); and the guards: a WebSocket upgrade \
            with an Origin header must get 403, a malformed room 400. Prints one line per step.

            A relay listening in plain WebSocket on loopback (behind a TLS proxy) is probed as \
            http://127.0.0.1:PORT; --connect reaches one node of a relay (TLS checked against the \
            URL's host) while the URL names the relay.

            Examples:
              herdr-relay probe https://relay.example.com
              herdr-relay probe https://relay.example.com --connect 203.0.113.7:443
              herdr-relay probe http://127.0.0.1:8787
            """,
        arguments: [PositionalSpec("url", help: "The relay's origin, https://host[:port].")],
        options: [
            OptionSpec("connect", valueName: "host:port", help: "Connect here instead of the URL's host and port."),
            OptionSpec(
                "ca-file", valueName: "file.pem", help: "Trust these PEM certificates instead of the system's.",
                completion: .files),
            OptionSpec(
                "timeout", valueName: "seconds", help: "Seconds for each request and connection.", defaultValue: "10"),
        ],
        exitCodes: [.success, misbehaves, .usage, .unavailable],
        handler: { arguments in
            let probe = try probe(from: arguments)
            return await BlockingCall.run { run(probe) }
        })

    /// The probe the command line asks for, checked before any work.
    static func probe(from arguments: ParsedArguments) throws(UsageError) -> RelayProbe {
        let url = arguments.positional("url") ?? ""
        var endpoint: RelayEndpoint
        do {
            endpoint = try RelayEndpoint(parsing: url)
        } catch {
            throw arguments.usageError(error.message)
        }
        if let connect = arguments.string("connect") {
            guard let (host, port) = HostPort.split(connect), port > 0 else {
                throw arguments.usageError("--connect must be host:port (IPv6 in brackets: [::1]:443), got \(connect)")
            }
            endpoint = endpoint.connecting(toHost: host, port: port)
        }
        if let file = arguments.string("ca-file") {
            guard access(file, R_OK) == 0 else {
                throw arguments.usageError("--ca-file \(file) cannot be read: \(String(cString: strerror(errno)))")
            }
            endpoint = endpoint.trusting(certificatesFile: file)
        }
        let text = arguments.string("timeout") ?? "10"
        guard let timeout = Double(text), timeout.isFinite, timeout > 0, timeout <= 600 else {
            throw arguments.usageError("--timeout must be a number of seconds above 0 and at most 600, got \(text)")
        }
        return RelayProbe(endpoint: endpoint, timeout: timeout)
    }

    static func run(_ probe: RelayProbe) -> ExitCode {
        let write: (String) -> Void = { try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: $0) }
        write("probing \(probe.endpoint)\n")
        let report = probe.run { step in
            let detail = step.detail.isEmpty ? "" : ": \(step.detail)"
            write((step.ok ? "ok   " : "FAIL ") + step.name + detail + "\n")
        }
        switch report.verdict {
        case .allGood:
            let mode = report.mode == .attestationRequired ? "attestation required" : "open mode"
            write("the relay speaks protocol v1 (\(mode))\n")
            return .success
        case .misbehaves:
            write("the relay answered, but misbehaves\n")
            return misbehaves
        case .unreachable:
            write("the relay is unreachable\n")
            return .unavailable
        }
    }
}
