import CLISupport
import Foundation
import HerdrKit

/// `hosts`, `add`, `remove`, `password`: the saved host profiles.
enum HostCommands {
    static let hosts = CommandSpec(
        name: "hosts", abstract: "List saved hosts: road, destination, pinned key, when each road last worked.",
        flags: [FlagSpec("names", help: "Print only the host names, one per line (for scripts and completion).")],
        handler: { @MainActor arguments in
            let store = try openStore()
            if arguments.flag("names") {
                for name in store.hosts.map(\.name).sorted() { print(name) }
                return .success
            }
            guard !store.hosts.isEmpty else {
                print("No hosts yet. Add one with: herdr-remote add NAME --host HOST")
                return .success
            }
            let pins = HostKeyPins(directory: store.directory)
            var rows = [["NAME", "ROAD", "DESTINATION", "PLATFORM", "SESSION", "HOST KEY"]]
            for host in store.hosts.sorted(by: { $0.name < $1.name }) {
                let session = host.remoteCommand.map { "command: \($0)" } ?? host.herdrSession ?? "default"
                if let relay = host.companion {
                    let key = Base64URL.decodeCanonical(relay.computerKey).map(CompanionPairing.fingerprint)
                    rows.append([
                        host.name, host.road, endpoint(host.hostname, host.port), host.platform.rawValue, session,
                        "computer key \(key ?? "?")" + (relay.registered ? "" : " (room not yet registered)"),
                    ])
                    continue
                }
                let pin = (try? pins.pinnedKey(hostname: host.hostname, port: host.port))?.map(\.fingerprintSHA256)
                rows.append([
                    host.name, "ssh", "\(host.username)@\(endpoint(host.hostname, host.port))", host.platform.rawValue,
                    session,
                    pin ?? "not pinned yet",
                ])
            }
            print(table(rows), terminator: "")
            for host in store.hosts.sorted(by: { $0.name < $1.name }) {
                guard let relay = host.companion else { continue }
                print(roadLines(host.name, relay, relayShown: endpoint(host.hostname, host.port)), terminator: "")
            }
            return .success
        })

    /// A companion host's roads and when each last worked.
    static func roadLines(_ name: String, _ road: PairedComputer, relayShown: String) -> String {
        func when(_ date: Date?) -> String {
            guard let date else { return "never yet" }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.string(from: date)
        }
        let home = road.home.isEmpty ? "none known" : road.home.map(\.description).joined(separator: ", ")
        return """
            \(name) roads:
              home network  \(home); last worked \(when(road.homeLastWorked))
              relay         \(road.relay == nil ? "none (paired on the home network)" : "\(relayShown); last worked \(when(road.relayLastWorked))")

            """
    }

    static let add = CommandSpec(
        name: "add", abstract: "Save a host to reach over SSH.",
        discussion: """
            The host is reached over SSH (usually its Tailscale MagicDNS name or 100.x address). Its host key \
            is pinned on the first connection, after you confirm its fingerprint.

            With --from-ssh-config, the HostName, User, Port and IdentityFile come from your ssh config, \
            resolved for ALIAS (default: NAME) as ssh -G resolves them; options given here win. A host that \
            needs ProxyJump or ProxyCommand is refused. herdr-remote import-ssh-config saves several at once.

            Examples:
              herdr-remote add studio --host studio.tail1234.ts.net --user alice --session work
              herdr-remote add studio --from-ssh-config
              herdr-remote add work --from-ssh-config build-box --session work
            """,
        arguments: [
            PositionalSpec("name", help: "A short name for the host, used with connect."),
            PositionalSpec(
                "alias", help: "With --from-ssh-config: the ssh config Host alias to read (default: the name).",
                isRequired: false, completion: SSHConfigImport.aliasNames),
        ],
        options: [
            OptionSpec(
                "host", valueName: "hostname",
                help: "Hostname or address to connect to (required unless --from-ssh-config)."),
            OptionSpec("port", short: "p", help: "SSH port.", defaultValue: "22"),
            OptionSpec("user", short: "u", help: "Login name on the host.", defaultValue: "your local user name"),
            OptionSpec(
                "platform", help: "unix or windows: decides how herdr is started.", defaultValue: "unix",
                completion: .values(["unix", "windows"])),
            OptionSpec(
                "session", short: "s", help: "herdr session to attach (1-64 of A-Z a-z 0-9 . _ -).",
                defaultValue: "herdr's default"),
            OptionSpec("command", valueName: "command", help: "Run this command instead of herdr (verbatim)."),
            identityOption,
            SSHConfigImport.configOption("With --from-ssh-config: read"),
        ],
        flags: [
            FlagSpec("replace", help: "Replace an existing host of the same name."),
            FlagSpec("from-ssh-config", help: "Read the host from your ssh config (see above)."),
        ],
        handler: { @MainActor arguments in
            let name = arguments.positional("name") ?? ""
            guard !name.trimmingCharacters(in: .whitespaces).isEmpty, !name.contains(where: \.isNewline) else {
                throw arguments.usageError("the host name must not be empty")
            }
            var imported: SSHConfigImport.Imported?
            if arguments.flag("from-ssh-config") {
                let alias = arguments.positional("alias") ?? name
                imported = try SSHConfigImport.resolve(alias, with: try SSHConfigImport.resolver(arguments))
            } else if arguments.positional("alias") != nil {
                throw arguments.usageError(
                    "a second argument is read only with --from-ssh-config (herdr-remote add NAME --from-ssh-config ALIAS)"
                )
            } else if arguments.wasGiven("ssh-config") {
                throw arguments.usageError("--ssh-config is read only with --from-ssh-config")
            } else if !arguments.wasGiven("host") {
                throw arguments.usageError(
                    "--host is required (or --from-ssh-config to read the host from your ssh config)")
            }
            let hostname = CanonicalHost.hostname(arguments.string("host") ?? imported?.hostname ?? "")
            guard !hostname.isEmpty, !hostname.contains(where: { $0.isWhitespace || $0.isNewline }) else {
                throw arguments.usageError("--host must be a hostname or address")
            }
            let port =
                arguments.wasGiven("port") ? try arguments.int("port", range: 1...65535) ?? 22 : imported?.port ?? 22
            let user =
                arguments.wasGiven("user")
                ? arguments.string("user") ?? "" : imported?.user ?? ProcessInfo.processInfo.userName
            guard !user.isEmpty, !user.contains(where: { $0.isWhitespace || $0.isNewline }) else {
                throw arguments.usageError("--user must be a login name")
            }
            let platformText = arguments.wasGiven("platform") ? arguments.string("platform") ?? "" : "unix"
            guard let platform = HostPlatform(rawValue: platformText) else {
                throw arguments.usageError("--platform must be unix or windows, not '\(platformText)'")
            }
            let session = arguments.wasGiven("session") ? arguments.string("session") : nil
            if let session, !HerdrSessionName.isValid(session) {
                throw arguments.usageError(
                    "invalid herdr session name \(HerdrCommand.posixQuoted(session)): use 1-64 of A-Z a-z 0-9 . _ - (not . or ..)"
                )
            }
            let identityFiles =
                arguments.wasGiven("identity") ? try identityFiles(arguments) : imported?.identityFiles ?? []
            let store = try openStore()
            let existing = store.host(named: name)
            if existing != nil && !arguments.flag("replace") {
                throw RemoteError(.failure, "a host named '\(name)' exists; use --replace to change it")
            }
            let profile = HostProfile(
                id: existing?.id ?? UUID(), name: name, hostname: hostname, port: port, username: user,
                platform: platform, herdrSession: session, remoteCommand: arguments.string("command"),
                identityFiles: identityFiles)
            for note in imported?.notes ?? [] { printError("note: \(note)") }
            store.upsert(profile)
            if let error = store.lastError { throw RemoteError(.ioError, error) }
            let origin = imported.map { " from \($0.alias) in \($0.origin)" } ?? ""
            print(
                "Saved \(name)\(origin): \(SSHConfigImport.summary(profile)). Connect with: herdr-remote connect \(name)"
            )
            return .success
        })

    static let remove = CommandSpec(
        name: "remove", abstract: "Delete a saved host and its stored password (its pinned SSH host key stays).",
        discussion: """
            For a host paired with herdr-host through a relay, the relay room is deleted first with a signed \
            request, so the computer learns the pairing is gone; if the relay cannot be reached the host is \
            removed here anyway, and the room expires after 30 days unused. One paired on the home network \
            alone stays paired on the computer until herdr-host unpair there.
            """,
        arguments: [PositionalSpec("name", help: "The host to delete.", completion: HostCommands.savedNames)],
        handler: { @MainActor arguments in
            let store = try openStore()
            let host = try findHost(arguments.positional("name") ?? "", in: store)
            if host.companion != nil {
                let outcome = await CompanionRemoval.deleteRoom(
                    of: host, secrets: SecretStore(directory: store.directory))
                store.delete(host.id)
                if let error = store.lastError { throw RemoteError(.ioError, error) }
                print("Removed \(host.name): \(outcome).")
                return .success
            }
            store.delete(host.id)
            if let error = store.lastError { throw RemoteError(.ioError, error) }
            print(
                "Removed \(host.name). Its pinned host key for \(endpoint(host.hostname, host.port)) stays; "
                    + "forget it with: herdr-remote forget-host-key \(endpoint(host.hostname, host.port))")
            return .success
        })

    static let password = CommandSpec(
        name: "password", abstract: "Store or clear the password used when the host does not accept the device key.",
        discussion:
            "The password is read from the terminal without echo (or from stdin when it is not a terminal) and kept in secrets.json (mode 0600), never in hosts.json.",
        arguments: [PositionalSpec("name", help: "The host the password is for.", completion: HostCommands.savedNames)],
        flags: [FlagSpec("clear", help: "Forget the stored password.")],
        handler: { @MainActor arguments in
            let store = try openStore()
            let host = try findHost(arguments.positional("name") ?? "", in: store)
            if arguments.flag("clear") {
                store.setPassword(nil, for: host.id)
                print("Cleared the password for \(host.name).")
                return .success
            }
            guard
                let secret = try TerminalPrompt.readLine(
                    prompt: "Password for \(host.username)@\(host.hostname): ", echo: false),
                !secret.isEmpty
            else { throw RemoteError(.failure, "no password given; nothing stored") }
            store.setPassword(secret, for: host.id)
            if let error = store.lastError { throw RemoteError(.ioError, error) }
            print("Stored the password for \(host.name).")
            return .success
        })

    // MARK: Shared

    /// `-i/--identity FILE`, on `add` (saved with the host) and `connect` (this connection only).
    static let identityOption = OptionSpec(
        "identity", short: "i", valueName: "file",
        help:
            "A private key file to log in with, as ssh -i: tried after this device's key and before ssh-agent's keys; its passphrase is asked when it has one.",
        isRepeatable: true, completion: .files)

    /// The `--identity` files as absolute paths (`~` expanded), each checked to be a readable file now,
    /// so a typo is caught when it is typed rather than as a refused login later.
    static func identityFiles(_ arguments: ParsedArguments) throws -> [String] {
        try arguments.strings("identity").map { given in
            let path = absolutePath(given)
            guard isReadableFile(path) else {
                throw arguments.usageError("--identity \(given): no readable key file at \(path)")
            }
            return path
        }
    }

    /// A regular file this process can read (not a directory).
    static func isReadableFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isReadableFile(atPath: path)
    }

    /// `~` and `~/…` expanded against the home directory, a relative path made absolute against the
    /// current directory.
    static func absolutePath(_ given: String) -> String {
        let home = FileManager.default.homeDirectoryForCurrentUser.path
        var path = given
        if path == "~" {
            path = home
        } else if path.hasPrefix("~/") {
            path = home + path.dropFirst(1)
        }
        if !path.hasPrefix("/") { path = FileManager.default.currentDirectoryPath + "/" + path }
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// Completes a saved host's name: the shell runs `herdr-remote hosts --names`.
    static let savedNames = CompletionSource.command(["hosts", "--names"])

    @MainActor
    static func openStore() throws -> HostStore {
        let store = HostStore(directory: .standard())
        if let error = store.lastError {
            // A corrupt file was moved aside; say so, but carry on with what could be read.
            printError("warning: \(error)")
        }
        return store
    }

    @MainActor
    static func findHost(_ name: String, in store: HostStore) throws -> HostProfile {
        guard let host = store.host(named: name) else {
            let known = store.hosts.map(\.name).sorted()
            var hint =
                known.isEmpty
                ? "no hosts are saved yet; add one with herdr-remote add" : "known: \(known.joined(separator: ", "))"
            if SSHConfigImport.isAlias(name) {
                hint += "; your ssh config has it: herdr-remote add \(name) --from-ssh-config"
            }
            throw RemoteError(.usage, "no host named '\(name)' (\(hint))")
        }
        return host
    }

    static func endpoint(_ hostname: String, _ port: Int) -> String {
        hostname.contains(":") ? "[\(hostname)]:\(port)" : "\(hostname):\(port)"
    }

    /// Left-aligned columns separated by two spaces.
    static func table(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
