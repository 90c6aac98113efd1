import CLISupport
import CompanionPairing
import Dispatch
import EndToEndChannel
import Foundation
import Glibc
import HerdrHostAgent
import HerdrKit
import Noise
import PeerGate
import PeerGateListener
import Plumbing
import RelayClient
import Synchronization

/// `herdr-host pair`: shows a `herdr://companion` code and confirms the device that scans it with
/// the code the device shows, typed here (specs/002 "Pairing confirmation").
enum PairCommand {
    static let spec = CommandSpec(
        name: "pair", abstract: "Pair a device: show a code, then type the code the device shows.",
        discussion: """
            Shows a herdr://companion code as a QR and as a line of text; scan it with `herdr-remote pair`. \
            The device shows a 6-digit code: type it here. This computer never shows that code (it only \
            asks for it), so a photographed QR is not enough to pair: the code must come from the device \
            in the person's hand. Three wrong codes void the pairing and show a new code; so do two \
            minutes without a device. Works whether or not `herdr-host run` is going; once paired, \
            `run` parks for the device.

            --relay is remembered for the next pairing. The relay must run in open mode \
            (ATTEST_REQUIRED=false): herdr-remote cannot do App Attest. The code also carries this \
            computer's home-network addresses (the home door, herdr-host config home-listen), so the device \
            can come straight here when it is home. With --no-relay the pairing happens on the home network \
            alone: this command listens there itself (home peers only) and the code names no relay; the \
            device then reaches this computer only on the home network.

            With --web or --web-client it first fetches every file of the web client installed here \
            (share/herdr-remote/web beside the programs, or HERDR_WEB_ROOT) from that address and says \
            whether the server sends them as they are, with their manifest SHA-256 (the one \
            herdr-relay logs): a phone that opens the code runs what that server sends.

            Examples:
              herdr-host pair --relay https://relay.example.com
              herdr-host pair --session work --png /tmp/code.png
              herdr-host pair --no-relay
              herdr-host pair --web          (a phone's camera opens the relay's web client)
            """,
        options: [
            OptionSpec("relay", valueName: "url", help: "The relay, https://host[:port] (default: the last one used)."),
            OptionSpec(
                "name", valueName: "name", help: "How the device shows this computer (1-64 characters).",
                defaultValue: "this machine's host name"),
            OptionSpec(
                "session", short: "s", valueName: "name", help: "herdr session the device attaches to after pairing."),
            OptionSpec("png", valueName: "file", help: "Also write the QR code to this PNG file.", completion: .files),
            OptionSpec(
                "web-client", valueName: "url",
                help:
                    "Show the code as the address of the web client served at this https:// address (the code in its fragment)."
            ),
        ],
        flags: [
            FlagSpec("no-relay", help: "Pair on the home network alone: the code names no relay."),
            FlagSpec(
                "web",
                help:
                    "Show the code as the address of the web client the relay serves (herdr-relay serve --web-client): a phone's camera opens it."
            ),
        ],
        exitCodes: [.success, .failure, .usage, .hangup, .interrupted, .terminated],
        handler: { arguments in
            let request = try Request(arguments)
            return await BlockingCall.run { request.run() }
        })

    struct Request: Sendable {
        /// Nil with --no-relay: the home network alone.
        var relay: RelayEndpoint?
        var name: String
        var session: String?
        var png: String?
        /// The web client whose address the code is shown as (the code in its fragment), if any.
        var webClient: String?
        var directory: AgentDirectory

        init(_ arguments: ParsedArguments) throws(UsageError) {
            directory = AgentDirectory.standard()
            let saved = AgentSettings.load(directory).relay
            if arguments.flag("no-relay") {
                guard !arguments.flag("web"), !arguments.wasGiven("web-client") else {
                    throw arguments.usageError(
                        "a browser reaches this computer through a relay only: --web and --web-client need one (not --no-relay)"
                    )
                }
                guard !arguments.wasGiven("relay") else {
                    throw arguments.usageError("give --relay or --no-relay, not both")
                }
                guard (try? AgentSettings.load(directory).homeDoor()) != nil else {
                    throw arguments.usageError(
                        "--no-relay pairs on the home network, but the home door is off (herdr-host config home-listen)"
                    )
                }
                relay = nil
            } else {
                guard let relayText = arguments.string("relay") ?? saved else {
                    throw arguments.usageError(
                        "give the relay with --relay https://host[:port] (it is remembered for the next pairing), "
                            + "or pair on the home network alone with --no-relay")
                }
                do throws(ConnectionError) {
                    relay = try RelayEndpoint(parsing: relayText)
                } catch {
                    throw arguments.usageError(
                        "--relay must be https://host[:port] with nothing after it (http:// only for a loopback host); "
                            + "an internationalized host name goes in its ASCII form (xn--…): \(error.message)")
                }
            }
            var name = PairingCodeRules.printableText(Self.hostName(), limit: PairingPayload.maximumNameLength)
            if arguments.wasGiven("name") {
                let given = arguments.string("name") ?? ""
                name = PairingCodeRules.printableText(given, limit: PairingPayload.maximumNameLength)
                guard !name.isEmpty, name == given else {
                    throw arguments.usageError("--name must be 1-64 printable characters")
                }
            }
            if name.isEmpty { name = "computer" }
            self.name = name
            session = arguments.string("session")
            if let session, !HerdrSessionName.isValid(session) {
                throw arguments.usageError(
                    "invalid herdr session name \(HerdrCommand.posixQuoted(session)): use 1-64 of A-Z a-z 0-9 . _ - (not . or ..)"
                )
            }
            png = arguments.string("png")
            if let given = arguments.string("web-client") {
                guard !arguments.flag("web") else { throw arguments.usageError("give --web or --web-client, not both") }
                do throws(PairingCodeError) {
                    webClient = try CompanionCode.webClientAddress(given)
                } catch {
                    throw arguments.usageError("--web-client: \(error.message)")
                }
            } else if arguments.flag("web") {
                webClient = relay.map { $0.origin + "/" }
            }
        }

        /// What the code's `home=` says: the running agent's door as it listens, else the
        /// configured door (none when it is off or its port is the kernel's pick).
        func homeAddresses() -> [HomeAddress] {
            if let status = try? AgentStatus.load(directory), status.isRunning {
                return (status.home?.addresses ?? []).compactMap { try? HomeAddress(parsing: $0) }
            }
            guard let door = try? AgentSettings.load(directory).homeDoor() else { return [] }
            return door.advertised(port: door.port, interfaces: InterfaceAddresses.current())
        }

        static func hostName() -> String {
            var buffer = [CChar](repeating: 0, count: 256)
            guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        func run() -> ExitCode {
            let staticKey: KeyPair
            do {
                try directory.create()
                staticKey = try StaticKeyFile.loadOrCreate(directory.staticKeyFile)
                if let relay {
                    var settings = AgentSettings.load(directory)
                    settings.relay = relay.origin
                    try settings.save(directory)
                }
            } catch {
                StandardError.write("error: \(error)\n")
                return .failure
            }
            if let webClient {
                // Before the code: the person sees whether the page a phone loads is this
                // computer's copy of the client.
                let root = WebClientCheck.installedRoot()
                let outcome = WebClientCheck.run(address: webClient, root: root)
                let said = WebClientCheck.describe(outcome, address: webClient, root: root) + "\n"
                if case .different = outcome {
                    StandardError.write(said)
                } else {
                    try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: said)
                }
            }
            let registry = DeviceRegistry(directory: directory)
            let console = TerminalPairingConsole(pngFile: png, webClient: webClient)
            let runner = ComputerPairingRunner(
                template: .init(
                    staticPublicKey: staticKey.publicKey, relay: relay, computerName: name, session: session,
                    home: relay == nil ? [] : homeAddresses()),
                staticKey: staticKey, registry: registry, console: console,
                homeDoor: try? AgentSettings.load(directory).homeDoor(), doorAddresses: { homeAddresses() })
            let signal = Mutex<Int32?>(nil)
            let watcher = try? SignalWatcher(
                signals: [SIGINT, SIGTERM, SIGHUP], queue: DispatchQueue(label: "herdr-host.signals")
            ) { number in
                signal.withLock { $0 = $0 ?? number }
                runner.inputs.push(.cancel)
            }
            defer { watcher?.cancel() }
            let inputs = runner.inputs
            LineReader.start { line in inputs.push(line.map { .line($0) } ?? .inputClosed) }
            let outcome = runner.run()
            switch outcome {
            case .paired(let device, let established):
                var lines = [
                    "Paired with \(device.name) (device key \(PairedDevice.fingerprint(of: device.deviceStaticKey)))."
                ]
                if device.code.relay == nil {
                    lines.append("Paired on the home network alone: the device reaches this computer there.")
                } else {
                    lines.append(
                        established
                            ? "The relay room is established: from now on both sides join it with signatures."
                            : "The device finishes setting up the relay room at its next connection.")
                }
                if let status = try? AgentStatus.load(directory), status.isRunning {
                    lines.append(
                        device.code.relay == nil
                            ? "herdr-host run is going: \(device.name) can connect now."
                            : "herdr-host run is going: it parks for \(device.name) now.")
                } else {
                    lines.append(
                        "Keep this computer reachable with: herdr-host run (or: systemctl --user enable --now herdr-host)"
                    )
                }
                try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: lines.joined(separator: "\n") + "\n")
                return .success
            case .cancelled:
                if let number = signal.withLock({ $0 }) {
                    StandardError.write("Cancelled; nothing was paired.\n")
                    return .signal(number)
                }
                StandardError.write("Not paired.\n")
                return .failure
            case .unfinished:
                return .failure
            }
        }
    }
}
