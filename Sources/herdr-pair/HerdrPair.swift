import CLISupport
import Foundation
import HerdrKit
import SSHPairingHost

/// The command line of `herdr-pair`: the foreground helper a person runs, and the enroll mode sshd
/// runs as the one-time key's forced command.
enum HerdrPair {
    /// The environment variable that must be `1` for `--test-mode`.
    static let testModeVariable = "HERDR_PAIR_TEST_MODE"
    /// The longest a code may live, and the default.
    static let maximumLifetime = 600
    static let minimumLifetime = 3
    /// How long the person has to answer once a device asked.
    static let approvalWindow = 120

    static let exitCodes: [ExitCode] = [
        .success, .failure,
        ExitCode(2, meaning: "Enroll mode: INVALID (bad key or name; the code is not used up)."),
        ExitCode(3, meaning: "Denied on this computer (enroll mode: DENIED)."),
        ExitCode(4, meaning: "The code or the approval window expired (enroll mode: EXPIRED)."),
        ExitCode(5, meaning: "Enroll mode: USED (another device already claimed the code)."),
        .usage, .hangup, .interrupted, .terminated,
    ]

    static let spec = CommandSpec(
        name: "herdr-pair",
        abstract: "Pair a device with this computer for the SSH road: a one-time QR code, approved here.",
        discussion: """
            Shows a one-time QR code. herdr-remote pair (or the herdr-ios app) reads it on the device, \
            connects over the tailnet with a one-time key that can only run the enroll step, and sends the \
            device's public key; you approve it here, and that key is added to authorized_keys. The one-time \
            key is removed again on every exit path. (For the relay and home-network roads, pair with \
            herdr-host pair instead.)

            Host names come from `tailscale status --json` when tailscale is installed; otherwise give \
            them with --host. Host keys are the local sshd's Ed25519 and ECDSA keys.

            Examples:
              herdr-pair
              herdr-pair --session work
              herdr-pair --host studio.tail1234.ts.net --host 100.101.102.103
            """,
        version: "0.1.0",
        options: [
            OptionSpec(
                "session", short: "s", valueName: "name", help: "herdr session the device attaches to after pairing."),
            OptionSpec(
                "host", valueName: "name",
                help: "Host name for the device to try, preferred first (a MagicDNS name or a 100.x address; up to 4).",
                isRepeatable: true),
            OptionSpec("port", short: "p", help: "SSH port (default: sshd's, else 22)."),
            OptionSpec(
                "authorized-keys", valueName: "file",
                help:
                    "The authorized_keys file to change (default: sshd's AuthorizedKeysFile, else ~/.ssh/authorized_keys).",
                completion: .files),
            OptionSpec(
                "host-key", valueName: "file.pub",
                help: "A host public key to pin (default: sshd's HostKey files, else /etc/ssh's).", isRepeatable: true,
                completion: .files),
            OptionSpec(
                "lifetime", valueName: "seconds",
                help: "How long the code is valid (\(minimumLifetime)-\(maximumLifetime)).",
                defaultValue: String(maximumLifetime)),
            OptionSpec(
                "enroll", valueName: "id", help: "Enroll mode (the one-time key's forced command; not for people)."),
            OptionSpec(
                "state", valueName: "dir", help: "Enroll mode: the pairing's state directory.", completion: .directories
            ),
            OptionSpec(
                "test-approval-timeout", valueName: "seconds",
                help: "TEST ONLY (with --test-mode): the approval window instead of \(approvalWindow) s."),
        ],
        flags: [
            FlagSpec(
                "test-mode",
                help:
                    "TEST ONLY, refused unless \(testModeVariable)=1: machine-readable lines on stdout, answers on stdin."
            )
        ],
        exitCodes: exitCodes,
        handler: { arguments in
            if arguments.wasGiven("enroll") || arguments.wasGiven("state") {
                return try EnrollMode.run(arguments)
            }
            let options = try ForegroundOptions(arguments)
            let path = arguments.commandPath
            let plan = try await BlockingCall.run {
                Result { () throws -> PairingPlan in
                    let plan = try PairingPlan.discover(options, commandPath: path)
                    try plan.validate()
                    return plan
                }
            }.get()
            return await BlockingCall.run { Foreground(plan: plan).run() }
        })
}

/// `--enroll=ID --state=DIR`: one token on stdout, its status as the exit code.
enum EnrollMode {
    static func run(_ arguments: ParsedArguments) throws(UsageError) -> ExitCode {
        guard let id = arguments.string("enroll"), let state = arguments.string("state") else {
            throw arguments.usageError("--enroll and --state go together")
        }
        let others = ["session", "host", "port", "authorized-keys", "host-key", "lifetime", "test-approval-timeout"]
        if let other = others.first(where: arguments.wasGiven) ?? (arguments.flag("test-mode") ? "test-mode" : nil) {
            throw arguments.usageError("--\(other) cannot be combined with --enroll")
        }
        let exchange = EnrollExchange(pairingIDText: id, statePath: state, acceptedBases: StateLocation.acceptedBases())
        let outcome = exchange.run { StandardError.write("herdr-pair: \($0)\n") }
        try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: outcome.token + "\n")
        return ExitCode(rawValue: outcome.exitStatus)
    }
}

/// The foreground's options, checked before any work.
struct ForegroundOptions: Sendable {
    var session: String?
    /// Canonical, deduplicated, in the order given; empty when none were given.
    var hosts: [String]
    var port: Int?
    var authorizedKeys: String?
    var hostKeyFiles: [String]
    var lifetime: Int
    var testMode: Bool
    var approvalWindow: Int

    init(_ arguments: ParsedArguments, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(UsageError)
    {
        testMode = arguments.flag("test-mode")
        if testMode && environment[HerdrPair.testModeVariable] != "1" {
            throw arguments.usageError(
                "--test-mode is for tests and needs \(HerdrPair.testModeVariable)=1 in the environment")
        }
        approvalWindow = HerdrPair.approvalWindow
        if arguments.wasGiven("test-approval-timeout") {
            guard testMode else { throw arguments.usageError("--test-approval-timeout needs --test-mode") }
            approvalWindow = try arguments.int("test-approval-timeout", range: 1...HerdrPair.approvalWindow)!
        }
        lifetime = try arguments.int("lifetime", range: HerdrPair.minimumLifetime...HerdrPair.maximumLifetime)!
        session = arguments.string("session")
        if let session, !HerdrSessionName.isValid(session) {
            throw arguments.usageError("--session must be 1-64 of A-Z a-z 0-9 . _ - (not . or ..), got '\(session)'")
        }
        port = try arguments.int("port", range: 1...65535)
        hosts = []
        for raw in arguments.strings("host") {
            guard let host = PairingHostNames.canonical(raw) else {
                throw arguments.usageError(
                    "--host '\(raw)' is not a name a device will accept: use a 100.64.0.0/10 address, an "
                        + "fd7a:115c:a1e0::/48 address, a single-label name, or a name ending in .ts.net")
            }
            if !hosts.contains(host) { hosts.append(host) }
        }
        guard hosts.count <= PairingPayload.maximumHostnames else {
            throw arguments.usageError("at most \(PairingPayload.maximumHostnames) --host names fit in a code")
        }
        authorizedKeys = arguments.string("authorized-keys").map(Self.absolute)
        hostKeyFiles = arguments.strings("host-key").map(Self.absolute)
        for file in hostKeyFiles {
            do {
                guard try HostKeyFingerprints.key(inPublicKeyFile: file) != nil else {
                    throw arguments.usageError(
                        "--host-key \(file) is not an Ed25519 or ECDSA key; only those can be pinned")
                }
            } catch let error as UsageError {
                throw error
            } catch {
                throw arguments.usageError("--host-key \(file): \(error)")
            }
        }
    }

    private static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
