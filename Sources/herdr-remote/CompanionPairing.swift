import CLISupport
import CompanionPairing
import Dispatch
import EndToEndChannel
import Foundation
import Glibc
import HerdrCrypto
import HerdrKit
import Noise
import PeerGate
import Synchronization

/// `pair` with a `herdr://companion` code: through the relay (or, for a code without one, on the
/// home network), the device shows a 6-digit code the person types on the computer (`herdr-host
/// pair`), then mints the room secret and registers the room (specs/002 "Pairing confirmation",
/// "Establishing the room"; nothing to register on the home network).
enum CompanionPairing {
    @MainActor
    static func run(
        _ code: CompanionCode, arguments: ParsedArguments, deviceName: String, saveAs: String?
    ) async throws -> ExitCode {
        let store = try HostCommands.openStore()
        let staticKey: KeyPair
        do {
            staticKey = try StaticKeyFile.loadOrCreate(store.directory.companionKeyFile)
        } catch {
            throw RemoteError(.ioError, "The device's relay key is unavailable: \(error)")
        }
        let keyFingerprint = fingerprint(staticKey.publicKey)
        StandardError.write(summary(code, deviceName: deviceName, deviceKey: keyFingerprint))
        if !arguments.flag("yes") {
            let computer = display(code)
            let road = way(code)
            let approved = await BlockingCall.run {
                TerminalPrompt.confirm(prompt: "Pair with \(computer) \(road)? [y/N] ")
            }
            guard approved else { throw RemoteError(.failure, "Not paired; nothing was sent.") }
        }

        let (name, existing) = PairCommand.chooseName(
            saveAs ?? display(code), in: store, replace: arguments.flag("replace"))
        let id = existing?.id ?? UUID()
        // A home-only computer is listed by its first home address.
        let first = code.home.first
        let profile = HostProfile(
            id: id, name: name, hostname: code.relay?.host ?? first.map { "\($0.address)" } ?? "",
            port: Int(code.relay?.port ?? first?.port ?? 0), username: "", herdrSession: code.session,
            companion: PairedComputer(
                relay: code.relay?.origin, computerKey: Base64URL.encode(code.staticPublicKey),
                pairingID: code.pidText, registered: false, deviceName: deviceName, home: code.home))
        let secrets = SecretStore(directory: store.directory)
        let saved = Mutex(false)
        let console = TerminalDevicePairingConsole(computer: display(code))
        // Where the computer's own door listens (a home-only code names herdr-host pair's).
        let homeSaid = Mutex<[HomeAddress]?>(nil)
        let runner = DevicePairingRunner(
            code: code, deviceName: deviceName, staticKey: staticKey, console: console,
            onHome: { addresses in homeSaid.withLock { $0 = addresses } }
        ) { secret, registered in
            // Kept before the secret goes to the computer, so a crash after cannot lose it.
            try secrets.setRoomSecret(secret, for: id)
            var kept = profile
            kept.companion?.registered = registered
            let failure: String? = DispatchQueue.main.sync {
                MainActor.assumeIsolated {
                    store.upsert(kept)
                    return store.lastError
                }
            }
            if let failure { throw RemoteError(.ioError, failure) }
            saved.withLock { $0 = true }
        }
        let ending = Mutex<Int32?>(nil)
        let watcher = try SignalWatcher(
            signals: [SIGINT, SIGTERM, SIGHUP], queue: DispatchQueue(label: "pair.signals")
        ) {
            number in
            ending.withLock { $0 = $0 ?? number }
            runner.inputs.push(.cancel)
        }
        let target = code.relay?.authority ?? "the home network (\(HomeAddress.listText(code.home)))"
        StandardError.write("Connecting to \(target)... (Ctrl+C cancels)\n")
        let result = await BlockingCall.run { runner.run() }
        watcher.cancel()

        func forget() {
            guard saved.withLock({ $0 }) else { return }
            try? secrets.setRoomSecret(nil, for: id)
            if existing == nil { store.delete(id) } else if let existing { store.upsert(existing) }
        }
        switch result {
        case .failure(let failure):
            forget()
            throw RemoteError(.ioError, "The pairing could not be kept here (\(failure)); nothing was paired.")
        case .success(.paired(_, let established)):
            if let addresses = homeSaid.withLock({ $0 }), var kept = store.hosts.first(where: { $0.id == id }) {
                kept.companion?.home = addresses
                store.upsert(kept)
            }
            var lines = ["Paired with \(display(code)) \(way(code))."]
            if existing != nil {
                lines.append("Replaced the saved host '\(name)'.")
            } else {
                let road = code.relay == nil ? "home network" : "relay"
                lines.append("Saved as '\(name)' (road: \(road)), session \(code.session ?? "default").")
            }
            if !established && code.relay != nil {
                lines.append("The relay room is finished at the next connection.")
            }
            let word = HerdrSessionName.isValid(name) ? name : HerdrCommand.posixQuoted(name)
            lines.append("Connect with: herdr-remote connect \(word)")
            try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: lines.joined(separator: "\n") + "\n")
            return .success
        case .success(.rejected):
            forget()
            throw RemoteError(RemoteExitCode.pairingDenied, "\(display(code)) rejected the pairing; nothing was kept.")
        case .success(.timedOut):
            forget()
            if let reason = runner.unreachableReason {
                throw RemoteError(
                    RemoteExitCode.unreachable,
                    "Could not reach \(target) in \(Int(DevicePairing.Configuration().timeout)) s (last: \(reason)); nothing was paired. Check this device's network, then show a new code and try again."
                )
            }
            throw RemoteError(
                RemoteExitCode.pairingCodeExpired,
                "\(display(code)) did not confirm the code in time; nothing was kept. Show a new code there and try again."
            )
        case .success(.roomTaken):
            forget()
            throw RemoteError(
                RemoteExitCode.pairingFailed, "The pairing's relay room was taken; pair again with a new code.")
        case .success(.cancelled):
            forget()
            if let number = ending.withLock({ $0 }) {
                throw RemoteError(.signal(number), "Pairing was cancelled; nothing was kept.")
            }
            throw RemoteError(.failure, "Pairing was cancelled; nothing was kept.")
        }
    }

    static func display(_ code: CompanionCode) -> String {
        let name = PairingCodeRules.printableText(code.computerName, limit: PairingPayload.maximumNameLength)
        return name.isEmpty ? code.relay?.host ?? "the computer" : name
    }

    /// "through relay.example.com" or "on the home network".
    static func way(_ code: CompanionCode) -> String {
        code.relay.map { "through \($0.authority)" } ?? "on the home network"
    }

    static func fingerprint(_ key: [UInt8]) -> String {
        "SHA256:" + Data(SHA256.hash(key)).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    static func summary(_ code: CompanionCode, deviceName: String, deviceKey: String) -> String {
        var relay = code.relay.map { "\($0.authority) (\($0.origin))" } ?? "none: the home network only"
        if let host = code.relay?.host, host.split(separator: ".").contains(where: { $0.hasPrefix("xn--") }) {
            relay += "\n               an internationalized name, shown in its ASCII form"
        }
        if !code.home.isEmpty { relay += "\n  home:        \(HomeAddress.listText(code.home))" }
        var text = """
            Pairing code for \(display(code)):
              relay:       \(relay)
              session:     \(code.session ?? "herdr's default")
              this device: "\(deviceName)", relay key \(deviceKey)

            """
        if let expiry = code.expiresAt {
            let seconds = max(0, Int(expiry.timeIntervalSinceNow))
            text = text.dropLast() + "\n  expires in:  \(seconds / 60) min \(seconds % 60) s\n\n"
        }
        return text
    }
}

/// The device's code on a terminal (stderr): shown as the last line, without a newline, so it can
/// be wiped in place the moment the connection drops.
final class TerminalDevicePairingConsole: DevicePairingConsole, @unchecked Sendable {
    private let computer: String
    private let lock = NSLock()
    private var showing: String?
    private let isTerminal = isatty(STDERR_FILENO) == 1

    init(computer: String) { self.computer = computer }

    private func write(_ text: String) {
        try? FileDescriptorWriter.writeAll(fd: STDERR_FILENO, string: text)
    }

    /// Ends the code line: wiped on a terminal, else marked void.
    private func clearLocked() {
        guard showing != nil else { return }
        showing = nil
        write(isTerminal ? "\r\u{1B}[2K" : " (void)\n")
    }

    func showCode(_ code: String) {
        lock.lock()
        defer { lock.unlock() }
        clearLocked()
        let spaced = "\(code.prefix(3)) \(code.suffix(3))"
        write(
            """
            \(computer) is asking for the code shown here. Type it there; it only counts there.
            If \(computer) is not asking, or says the code is wrong, cancel here (Ctrl+C): someone else may be pairing.

            """)
        let line = "Type this code on \(computer): \(spaced)"
        write(line)
        showing = line
    }

    func blankCode(_ reason: String) {
        lock.lock()
        defer { lock.unlock() }
        clearLocked()
        write("\(reason)\n")
    }

    func say(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        guard let line = showing else { return write("\(text)\n") }
        // The code stays the last line: the message goes above it, and the code is written again.
        write(isTerminal ? "\r\u{1B}[2K\(text)\n\(line)" : "\n\(text)\n\(line)")
    }
}
