import CLISupport
import CompanionPairing
import Dispatch
import Foundation
import Glibc
import HerdrKit
import PairImage

/// `pair URL | --image FILE.png | -`: pairs this device with the computer that shows a
/// `herdr-pair` QR code, saves the host, and attaches to its session.
enum PairCommand {
    static let spec = CommandSpec(
        name: "pair", abstract: "Pair with a computer from the QR code herdr-pair or herdr-host shows.",
        discussion: """
            The code comes as its text, from stdin with -, or from a PNG picture of the QR code with --image. \
            Its start says which road it is for.

            herdr://pair?... (herdr-pair, the SSH road) names the computer, the account, its tailnet addresses \
            and its host keys. Before a byte is sent, the code is checked field by field, each address must be \
            on the tailnet (100.64.0.0/10 or fd7a:115c:a1e0::/48), and a key pinned for any of its names must \
            be one of the code's. The computer's person approves this device there and its key is added to \
            their authorized_keys; the host is saved with its host key pinned (one of the code's, no prompt), \
            and the session is attached as with connect.

            herdr://companion?... (herdr-host pair, the end-to-end roads) names the computer's key and a relay, \
            or only the computer's home-network addresses; the relay's host is shown in ASCII before anything \
            is sent. This device shows a 6-digit code: type it on the computer. Once it matches, both sides \
            keep a room secret and the host is saved; connect reaches it.

            A code never sets a remote command and never replaces a pinned key. A name already taken gets a \
            -2, -3... suffix unless --replace.

            Examples:
              herdr-remote pair --image ~/Desktop/qr.png
              pbpaste | herdr-remote pair - --yes --no-connect
            """,
        arguments: [
            PositionalSpec(
                "code", help: "The herdr://pair?... or herdr://companion?... code, or - to read it from stdin.",
                isRequired: false)
        ],
        options: [
            OptionSpec(
                "image", valueName: "file.png", help: "Read the code from a PNG picture of the QR code.",
                completion: .files),
            OptionSpec(
                "name", valueName: "device", help: "How the computer shows this device.",
                defaultValue: "this machine's host name"),
            OptionSpec(
                "save-as", valueName: "host", help: "Save the host under this name instead of the computer's name."),
        ],
        flags: [
            FlagSpec("yes", short: "y", help: "Pair without asking here first (the computer still asks)."),
            FlagSpec(
                "no-connect",
                help: "Save and pin, but do not attach afterwards (a herdr://companion pairing never does)."),
            FlagSpec("replace", help: "Replace a saved host of the same name instead of adding a suffix."),
        ],
        exitCodes: RemoteExitCode.pairCodes,
        handler: { @MainActor arguments in
            try await run(arguments)
        })

    @MainActor
    static func run(_ arguments: ParsedArguments) async throws -> ExitCode {
        // Validation before work.
        let codeArgument = arguments.positional("code")
        let imagePath = arguments.string("image")
        switch (codeArgument, imagePath) {
        case (nil, nil):
            throw arguments.usageError("give the pairing code, - to read it from stdin, or --image FILE.png")
        case (.some, .some): throw arguments.usageError("give either the pairing code or --image, not both")
        default: break
        }
        var deviceName = Pairing.sanitizedDeviceName(localHostName())
        if arguments.wasGiven("name") {
            let given = arguments.string("name") ?? ""
            guard !PairingCodeRules.printableText(given, limit: Pairing.maximumDeviceNameLength).isEmpty else {
                throw arguments.usageError("--name must contain a printable character")
            }
            deviceName = Pairing.sanitizedDeviceName(given)
        }
        var saveAs: String?
        if arguments.wasGiven("save-as") {
            let given = PairingCodeRules.printableText(arguments.string("save-as") ?? "", limit: 64)
            guard !given.isEmpty, given == arguments.string("save-as") else {
                throw arguments.usageError("--save-as must be 1-64 printable characters")
            }
            saveAs = given
        }

        // The code.
        let text: String
        if let imagePath {
            text = try codeFromImage(imagePath)
        } else if codeArgument == "-" {
            text = try await codeFromStandardInput()
        } else {
            text = codeArgument ?? ""
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if HerdrLink.host(of: trimmed) == CompanionCode.host || CompanionCode.isWebAddress(trimmed) {
            let code: CompanionCode
            do throws(PairingCodeError) {
                code = try CompanionCode(parsing: trimmed)
            } catch {
                let exit =
                    error.kind == .expired ? RemoteExitCode.pairingCodeExpired : RemoteExitCode.pairingCodeInvalid
                throw RemoteError(exit, error.message)
            }
            return try await CompanionPairing.run(code, arguments: arguments, deviceName: deviceName, saveAs: saveAs)
        }
        let payload: PairingPayload
        do throws(PairingCodeError) {
            payload = try PairingPayload(parsing: trimmed)
        } catch {
            let code = error.kind == .expired ? RemoteExitCode.pairingCodeExpired : RemoteExitCode.pairingCodeInvalid
            throw RemoteError(code, error.message)
        }

        let store = try HostCommands.openStore()
        let deviceKey: DeviceKeyPair
        do {
            deviceKey = try DeviceKey.load(in: store.directory)
        } catch {
            throw RemoteError(.ioError, "The device key is unavailable: \(error)")
        }

        // Ask first.
        StandardError.write(summary(payload, deviceName: deviceName, deviceKey: deviceKey.publicKey.fingerprintSHA256))
        if !arguments.flag("yes") {
            let computer = display(payload)
            let approved = await BlockingCall.run {
                TerminalPrompt.confirm(prompt: "Pair with \(computer) as \(payload.username)? [y/N] ")
            }
            guard approved else { throw RemoteError(.failure, "Not paired; nothing was sent.") }
        }

        // Enroll, with Ctrl+C, SIGTERM and SIGHUP cancelling it.
        let profile = try await enroll(
            payload, deviceName: deviceName, deviceKey: deviceKey, directory: store.directory)

        // Save.
        let (name, existing) = chooseName(saveAs ?? profile.name, in: store, replace: arguments.flag("replace"))
        var saved = profile
        saved.name = name
        if let existing { saved.id = existing.id }
        store.upsert(saved)
        if let error = store.lastError {
            throw RemoteError(.ioError, "Paired, and the host key is pinned, but the host could not be saved: \(error)")
        }
        let endpoint = HostCommands.endpoint(saved.hostname, saved.port)
        let pin = (try? HostKeyPins(directory: store.directory).pinnedKey(hostname: saved.hostname, port: saved.port))??
            .fingerprintSHA256
        var lines = ["Paired with \(display(payload))."]
        if existing != nil {
            lines.append(
                "Replaced the saved host '\(name)': \(saved.username)@\(endpoint), session \(saved.herdrSession ?? "default")."
            )
        } else {
            lines.append(
                "Saved as '\(name)': \(saved.username)@\(endpoint), session \(saved.herdrSession ?? "default").")
        }
        if name != (saveAs ?? profile.name), existing == nil {
            lines.append("(A host named '\(saveAs ?? profile.name)' exists; use --replace to replace it.)")
        }
        lines.append("Pinned host key \(pin ?? "(unreadable)") for \(endpoint).")
        if arguments.flag("no-connect") {
            let word = HerdrSessionName.isValid(name) ? name : HerdrCommand.posixQuoted(name)
            lines.append("Connect with: herdr-remote connect \(word)")
        }
        // Unbuffered, so it comes before anything the attached session writes.
        try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: lines.joined(separator: "\n") + "\n")

        guard !arguments.flag("no-connect") else { return .success }
        // The existing connect path: same store, the pin just made, no prompt.
        return await CommandLineTool.run(herdrRemote, arguments: ["connect", "--", name])
    }

    // MARK: Enroll

    @MainActor
    private static func enroll(
        _ payload: PairingPayload, deviceName: String, deviceKey: DeviceKeyPair, directory: ConfigDirectory
    ) async throws -> HostProfile {
        let computer = display(payload)
        let task = Task { @MainActor () -> Result<HostProfile, PairingError> in
            do throws(PairingError) {
                return .success(
                    try await Pairing.enroll(payload: payload, deviceName: deviceName, directory: directory) {
                        progress in
                        switch progress {
                        case .connecting(let hostname):
                            StandardError.write("Connecting to \(HostCommands.endpoint(hostname, payload.port))...\n")
                        case .waitingForApproval:
                            StandardError.write(
                                "Waiting for approval on \(computer): confirm \"\(deviceName)\" with device key "
                                    + "\(deviceKey.publicKey.fingerprintSHA256) there. (Ctrl+C cancels.)\n")
                        }
                    })
            } catch {
                return .failure(error)
            }
        }
        let ending = SignalBox()
        let watcher = try SignalWatcher(signals: [SIGINT, SIGTERM, SIGHUP], queue: .main) { number in
            MainActor.assumeIsolated {
                ending.signal = ending.signal ?? number
                task.cancel()
            }
        }
        let result = await task.value
        watcher.cancel()
        switch result {
        case .success(let profile):
            return profile
        case .failure(let error):
            if case .cancelled = error, let signal = ending.signal {
                throw RemoteError(.signal(signal), "Pairing was cancelled; nothing was pinned or saved.")
            }
            throw failure(error)
        }
    }

    /// Each pairing error as its exit code and message (with what to do next where there is something).
    static func failure(_ error: PairingError) -> RemoteError {
        let text = error.description
        switch error {
        case .linkExpired, .expired: return RemoteError(RemoteExitCode.pairingCodeExpired, text)
        case .conflictingPin(let hostname, let port):
            let endpoint = HostCommands.endpoint(hostname, port)
            return RemoteError(
                RemoteExitCode.pinConflict,
                "\(text)\nSee the pinned key with: herdr-remote hosts; forget it with: herdr-remote forget-host-key \(endpoint)"
            )
        case .hostKeyMismatch: return RemoteError(RemoteExitCode.hostKeyRefused, text)
        case .unreachable: return RemoteError(RemoteExitCode.unreachable, text)
        case .notOnTailnet: return RemoteError(RemoteExitCode.notOnTailnet, text)
        case .pairingKeyRejected: return RemoteError(RemoteExitCode.pairingKeyRejected, text)
        case .denied: return RemoteError(RemoteExitCode.pairingDenied, text)
        case .used: return RemoteError(RemoteExitCode.pairingCodeUsed, text)
        case .failed: return RemoteError(RemoteExitCode.pairingFailed, text)
        case .cancelled: return RemoteError(.interrupted, text)
        }
    }

    // MARK: The code

    /// The one herdr code in a picture.
    static func codeFromImage(_ path: String) throws -> String {
        let texts: [String]
        do throws(PairImageError) {
            texts = try PairImageReader.qrTexts(inFile: path)
        } catch {
            throw RemoteError(
                error.kind == .unreadable ? .noInput : RemoteExitCode.pairingCodeInvalid, error.description)
        }
        var codes: [String] = []
        for text in texts where text.lowercased().hasPrefix("herdr://") && !codes.contains(text) { codes.append(text) }
        switch codes.count {
        case 1:
            return codes[0]
        case 0 where texts.isEmpty:
            throw RemoteError(RemoteExitCode.pairingCodeInvalid, "No QR code found in \(path)")
        case 0:
            let shown = PairingCodeRules.printableText(texts[0], limit: 60)
            throw RemoteError(
                RemoteExitCode.pairingCodeInvalid,
                "The QR code in \(path) is not a herdr pairing code (it reads \"\(shown)\(texts[0].unicodeScalars.count > 60 ? "…" : "")\")"
            )
        default:
            throw RemoteError(
                RemoteExitCode.pairingCodeInvalid,
                "\(path) shows \(codes.count) different herdr pairing codes; use a picture of just one")
        }
    }

    /// One line from stdin (the code), leaving the rest for the confirmation prompt.
    static func codeFromStandardInput() async throws -> String {
        let line = await BlockingCall.run { readCodeLine(STDIN_FILENO) }
        switch line {
        case .line(let text): return text
        case .tooLong:
            throw RemoteError(
                RemoteExitCode.pairingCodeInvalid,
                "The pairing code is longer than \(PairingPayload.maximumLength) bytes")
        case .empty: throw RemoteError(RemoteExitCode.pairingCodeInvalid, "No pairing code on stdin")
        case .failed(let reason): throw RemoteError(.ioError, "Cannot read the pairing code from stdin: \(reason)")
        }
    }

    enum CodeLine: Sendable {
        case line(String)
        case tooLong
        case empty
        case failed(String)
    }

    /// Reads up to a newline, one byte at a time (so nothing after it is consumed), at most a code's length.
    static func readCodeLine(_ fd: Int32) -> CodeLine {
        var bytes: [UInt8] = []
        while true {
            var byte: UInt8 = 0
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return .failed(String(cString: strerror(errno))) }
            if count == 0 || byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
            // Room for the longest code and a CR.
            if bytes.count > PairingPayload.maximumLength + 1 { return .tooLong }
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? .empty : .line(text)
    }

    // MARK: Text

    /// The computer as a person knows it: its printable name, or its first host name.
    static func display(_ payload: PairingPayload) -> String {
        let name = PairingCodeRules.printableText(payload.computerName, limit: PairingPayload.maximumNameLength)
        return name.isEmpty ? payload.hostnames[0] : name
    }

    static func summary(_ payload: PairingPayload, deviceName: String, deviceKey: String) -> String {
        let seconds = max(0, Int(payload.expiresAt.timeIntervalSinceNow))
        let names = payload.hostnames.joined(separator: ", ")
        return """
            Pairing code for \(display(payload)):
              account:     \(payload.username) (\(payload.platform.rawValue))
              addresses:   \(names), port \(payload.port)
              session:     \(payload.session ?? "herdr's default")
              host keys:   \(payload.hostKeyFingerprints.joined(separator: "\n               "))
              this device: "\(deviceName)", key \(deviceKey)
              expires in:  \(seconds / 60) min \(seconds % 60) s

            """
    }

    /// This machine's host name (`gethostname`), the default device name.
    static func localHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Saving

    /// The name to save under, and the profile it replaces (with `--replace`). A name is taken when
    /// a saved host has it in any letter case, since `connect` finds names that way.
    @MainActor
    static func chooseName(_ base: String, in store: HostStore, replace: Bool) -> (String, HostProfile?) {
        func taken(_ name: String) -> HostProfile? {
            store.hosts.first { $0.name.lowercased() == name.lowercased() }
        }
        guard let existing = taken(base) else { return (base, nil) }
        if replace { return (existing.name, existing) }
        for suffix in 2...1000 where taken("\(base)-\(suffix)") == nil {
            return ("\(base)-\(suffix)", nil)
        }
        return ("\(base)-\(UUID().uuidString.prefix(8).lowercased())", nil)
    }
}

/// The signal that ended pairing, set on the main queue.
@MainActor
private final class SignalBox {
    var signal: Int32?
}
