import CLISupport
import Foundation
import HerdrKit

/// Hosts from ssh_config, resolved as `ssh -G` resolves them: `add NAME --from-ssh-config [ALIAS]`
/// and `import-ssh-config [ALIAS ...]`.
enum SSHConfigImport {
    /// What an import keeps of one alias, and what it says about the rest.
    struct Imported {
        let alias: String
        let hostname: String
        let port: Int
        let user: String
        let identityFiles: [String]
        /// Where it came from, for the saved line: `~/.ssh/config`.
        let origin: String
        /// One sentence each: what the config has that the profile leaves out.
        let notes: [String]
    }

    /// `-F/--ssh-config FILE`, as `ssh -F`; `lead` starts its help (`add` reads it only with
    /// `--from-ssh-config`).
    static func configOption(_ lead: String) -> OptionSpec {
        OptionSpec(
            "ssh-config", short: "F", valueName: "file",
            help: "\(lead) this file alone, as ssh -F does (default: ~/.ssh/config, then /etc/ssh/ssh_config).",
            completion: .files)
    }

    /// Completes ssh config aliases: `import-ssh-config --list`.
    static let aliasNames = CompletionSource.command(["import-ssh-config", "--list"])

    /// The keys ssh tries when the config names none, kept when they exist: those libssh2 can use.
    static let defaultKeyFiles = ["~/.ssh/id_ecdsa", "~/.ssh/id_ed25519", "~/.ssh/id_rsa"]

    static func resolver(_ arguments: ParsedArguments) throws -> SSHConfigResolver {
        let environment: SSHConfigEnvironment
        do {
            environment = try SSHConfigEnvironment.current()
        } catch {
            throw RemoteError(.failure, "cannot read ssh config: \(error)")
        }
        if let file = arguments.string("ssh-config") {
            return .file(HostCommands.absolutePath(file), environment: environment)
        }
        return .standard(environment: environment)
    }

    /// Resolves `alias`; a host that needs a jump host or a proxy command is refused whole.
    static func resolve(_ alias: String, with resolver: SSHConfigResolver) throws -> Imported {
        let resolution: SSHConfigResolution
        do {
            resolution = try resolver.resolve(alias: alias)
        } catch {
            throw RemoteError(.failure, "cannot read ssh config for \(alias): \(error)")
        }
        if let refusal = resolution.refusal { throw RemoteError(.failure, "not imported: \(refusal.reason)") }
        var notes = resolution.notes
        let home = resolver.environment.homeDirectory
        var identityFiles: [String] = []
        if resolution.usesDefaultIdentityFiles {
            identityFiles = defaultKeyFiles.map { home + $0.dropFirst(1) }.filter(HostCommands.isReadableFile)
        } else {
            for file in resolution.identityFileSettings {
                guard let path = file.path else { continue }
                if HostCommands.isReadableFile(path) {
                    identityFiles.append(path)
                } else {
                    notes.append("IdentityFile \(file.written) (\(file.location)) is not a readable file; left out")
                }
            }
        }
        let origins = Set(
            [resolution.hostnameSetting, resolution.userSetting, resolution.portSetting].compactMap {
                $0?.location.displayPath
            })
        let origin =
            origins.count == 1
            ? origins.first!
            : resolver.sources.map { SSHConfigLocation(path: $0.path, line: 0, home: home).displayPath }.joined(
                separator: ", ")
        return Imported(
            alias: alias, hostname: CanonicalHost.hostname(resolution.hostname), port: resolution.port,
            user: resolution.user, identityFiles: identityFiles, origin: origin, notes: notes)
    }

    /// Whether `name` is a Host alias of the user's ssh config, for the hint when it is not saved
    /// here. A config that cannot be read is simply no hint.
    static func isAlias(_ name: String) -> Bool {
        guard let environment = try? SSHConfigEnvironment.current(),
            let aliases = try? SSHConfigResolver.standard(environment: environment).concreteAliases()
        else { return false }
        return aliases.contains { $0.name == name }
    }

    /// `user@host:port` and the key files, for the lines that say what was saved.
    static func summary(_ profile: HostProfile) -> String {
        let keys = profile.identityFiles.isEmpty ? "" : " with \(profile.identityFiles.joined(separator: ", "))"
        return "\(profile.username)@\(HostCommands.endpoint(profile.hostname, profile.port))\(keys)"
    }

    static let importCommand = CommandSpec(
        name: "import-ssh-config", abstract: "Save hosts from ~/.ssh/config, resolved as ssh -G resolves them.",
        discussion: """
            Each alias becomes a host of the same name with the HostName, User, Port and IdentityFile ssh would \
            use: the first value wins, Include and wildcard Host blocks apply, Match blocks are skipped (with a \
            note). Without aliases, every Host alias without wildcards is imported. A host that needs ProxyJump \
            or ProxyCommand is not imported, and neither is one whose name is already saved (unless --replace).

            Exits 1 when an alias you named could not be imported.

            Examples:
              herdr-remote import-ssh-config
              herdr-remote import-ssh-config studio build --replace
            """,
        arguments: [
            PositionalSpec(
                "alias", help: "Host aliases to import (default: every alias without wildcards).", isRequired: false,
                isRepeating: true, completion: aliasNames)
        ],
        options: [configOption("Read")],
        flags: [
            FlagSpec("replace", help: "Update hosts already saved under the same name."),
            FlagSpec("dry-run", help: "Show what would be saved, and save nothing."),
            FlagSpec(
                "list", help: "Print only the aliases, one per line (for scripts and completion), and save nothing."),
        ],
        handler: { @MainActor arguments in
            let resolver = try resolver(arguments)
            if arguments.flag("list") {
                do {
                    for alias in try resolver.concreteAliases() { print(alias.name) }
                } catch {
                    throw RemoteError(.failure, "cannot read ssh config: \(error)")
                }
                return .success
            }
            let named = arguments.positionals("alias")
            let aliases: [String]
            if named.isEmpty {
                do {
                    aliases = try resolver.concreteAliases().map(\.name)
                } catch {
                    throw RemoteError(.failure, "cannot read ssh config: \(error)")
                }
                guard !aliases.isEmpty else {
                    print(
                        "No Host aliases without wildcards in \(resolver.sources.map(\.path).joined(separator: ", ")).")
                    return .success
                }
            } else {
                aliases = named
            }
            let store = try HostCommands.openStore()
            let dryRun = arguments.flag("dry-run")
            var failed = false
            for alias in aliases {
                let imported: Imported
                do {
                    imported = try resolve(alias, with: resolver)
                } catch {
                    print("Skipped \(alias): \(error)")
                    if !named.isEmpty { failed = true }
                    continue
                }
                let existing = store.host(named: alias)
                if existing != nil && !arguments.flag("replace") {
                    print("Skipped \(alias): a host of that name is saved already (--replace updates it)")
                    continue
                }
                if let existing, existing.companion != nil {
                    print("Skipped \(alias): a companion host of that name is saved (remove it first)")
                    if !named.isEmpty { failed = true }
                    continue
                }
                var profile = existing ?? HostProfile(name: alias, hostname: "", username: "")
                profile.hostname = imported.hostname
                profile.port = imported.port
                profile.username = imported.user
                profile.identityFiles = imported.identityFiles
                if !dryRun {
                    store.upsert(profile)
                    if let error = store.lastError { throw RemoteError(.ioError, error) }
                }
                let verb = dryRun ? "Would save" : existing == nil ? "Saved" : "Updated"
                print("\(verb) \(alias): \(summary(profile))")
                for note in imported.notes { print("  note: \(note)") }
            }
            return failed ? .failure : .success
        })
}
