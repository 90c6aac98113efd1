import Glibc

/// Resolves a Host alias through ssh_config files as OpenSSH 9.2's `ssh -G ALIAS` does, for
/// importing hosts from `~/.ssh/config`: HostName, User, Port and IdentityFile, the first value
/// obtained for each winning; `Host` patterns with `*`, `?` and `!`; `Include` with globs, `~`
/// and relative paths, to 16 levels; `Match` blocks skipped, with a note. ProxyJump and
/// ProxyCommand, which herdr-remote cannot follow, make the resolution a refusal.
///
/// Pure: files come through an ``SSHConfigFileSystem`` and the local account through an
/// ``SSHConfigEnvironment``, so tests and the fuzzer feed text.
///
/// ```swift
/// let resolver = SSHConfigResolver.standard(environment: try .current())
/// let host = try resolver.resolve(alias: "studio")
/// if let refusal = host.refusal { throw refusal }        // "studio uses ProxyJump …"
/// HostProfile(name: "studio", hostname: host.hostname, port: host.port, username: host.user)
/// ```
public struct SSHConfigResolver: Sendable {
    /// The top-level files, in the order ssh reads them.
    public let sources: [SSHConfigSource]
    /// Where the files are read.
    public let fileSystem: any SSHConfigFileSystem
    /// The local account and machine.
    public let environment: SSHConfigEnvironment

    /// The keys ssh tries when the config gives no IdentityFile (readconf.c
    /// fill_default_options), in its order and as `ssh -G` prints them.
    public static let defaultIdentityFiles = [
        "~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ecdsa_sk", "~/.ssh/id_ed25519", "~/.ssh/id_ed25519_sk",
        "~/.ssh/id_xmss", "~/.ssh/id_dsa",
    ]

    /// A resolver reading `sources` in order: each file is read from its top with every block
    /// applying until a Host or Match line says otherwise, and a value set by an earlier line
    /// (or file) is never replaced.
    public init(
        sources: [SSHConfigSource], fileSystem: any SSHConfigFileSystem = LocalSSHConfigFileSystem(),
        environment: SSHConfigEnvironment
    ) {
        self.sources = sources
        self.fileSystem = fileSystem
        self.environment = environment
    }

    /// What plain `ssh` reads: `~/.ssh/config` under the environment's home, then
    /// `/etc/ssh/ssh_config`.
    public static func standard(
        environment: SSHConfigEnvironment, fileSystem: any SSHConfigFileSystem = LocalSSHConfigFileSystem()
    ) -> SSHConfigResolver {
        SSHConfigResolver(
            sources: [.userConfig(home: environment.homeDirectory), .systemConfig], fileSystem: fileSystem,
            environment: environment)
    }

    /// What `ssh -F path` reads: that file alone, which must exist.
    public static func file(
        _ path: String, environment: SSHConfigEnvironment,
        fileSystem: any SSHConfigFileSystem = LocalSSHConfigFileSystem()
    ) -> SSHConfigResolver {
        SSHConfigResolver(sources: [.explicit(path)], fileSystem: fileSystem, environment: environment)
    }

    /// What ssh would connect to for `alias` (a Host alias as typed on ssh's command line; Host
    /// patterns match it case-sensitively, as ssh's do). Throws where ssh itself would stop, for
    /// a file that cannot be read, or for a limit exceeded; a host that needs ProxyJump or
    /// ProxyCommand is a resolution with ``SSHConfigResolution/refusal`` set.
    public func resolve(alias: String) throws(SSHConfigError) -> SSHConfigResolution {
        let typed = Array(alias.utf8)
        guard Self.isValidAlias(typed) else {
            throw SSHConfigError(
                .invalidAlias,
                "'\(alias)' is not a Host alias (1 to \(SSHConfigLimits.maxAliasBytes) bytes, no blanks, control characters or @, not starting with -)"
            )
        }
        var walk = SSHConfigWalk(mode: .resolve(host: typed), fileSystem: fileSystem, environment: environment)
        for source in sources { try walk.read(source) }

        let hostname = try self.hostname(walk.hostname, alias: typed)
        let user = walk.user?.value ?? environment.localUser
        let port = walk.port?.value ?? 22
        let hostKeyAlias = walk.noted.first { $0.keyword == "hostkeyalias" }?.setting.value
        var notes = walk.notes
        var identityFiles: [SSHConfigIdentityFile] = []
        for (setting, _) in walk.identityFiles {
            let path = try expandIdentityFile(
                setting, alias: alias, hostname: hostname, user: user, port: port, hostKeyAlias: hostKeyAlias)
            if let path, !path.hasPrefix("/") {
                notes.append(
                    "\(setting.location): IdentityFile \(setting.value) is a relative path, which ssh reads from the directory it runs in"
                )
            }
            identityFiles.append(SSHConfigIdentityFile(written: setting.value, path: path, location: setting.location))
        }

        var remoteCommand: SSHConfigSetting?
        for (keyword, setting) in walk.noted {
            guard let description = SSHConfigKeywords.noted[keyword],
                !SSHConfigKeywords.isInert(keyword: keyword, value: setting.value)
            else { continue }
            if keyword == "remotecommand" { remoteCommand = setting }
            notes.append("\(setting.location): \(Self.spelling[keyword] ?? keyword) \(setting.value) \(description)")
        }

        var proxyJump: SSHConfigSetting?
        var proxyCommand: SSHConfigSetting?
        var refusal: SSHConfigRefusal?
        if case .host(let setting) = walk.jump {
            proxyJump = setting
            refusal = SSHConfigRefusal(
                kind: .proxyJump, setting: setting,
                reason:
                    "\(alias) uses ProxyJump \(setting.value) (\(setting.location)); herdr-remote cannot connect through a jump host yet"
            )
        } else if let setting = walk.proxyCommand, setting.value.lowercased() != "none" {
            proxyCommand = setting
            refusal = SSHConfigRefusal(
                kind: .proxyCommand, setting: setting,
                reason:
                    "\(alias) uses ProxyCommand \(setting.value) (\(setting.location)); herdr-remote cannot connect through a proxy command yet"
            )
        }

        return SSHConfigResolution(
            alias: alias, hostname: hostname, hostnameSetting: walk.hostname, user: user, userSetting: walk.user,
            port: port, portSetting: walk.port?.setting, identityFileSettings: identityFiles, proxyJump: proxyJump,
            proxyCommand: proxyCommand, remoteCommand: remoteCommand, notes: notes, refusal: refusal)
    }

    /// The concrete aliases the Host lines name (no `*`, `?` or `!`), in file order and each
    /// once, following Includes; an alias is listed only where resolving it would reach its
    /// block (`Host studio !studio` names none). Throws as ``resolve(alias:)`` does for a file
    /// ssh would refuse.
    public func concreteAliases() throws(SSHConfigError) -> [SSHConfigAlias] {
        var walk = SSHConfigWalk(mode: .list, fileSystem: fileSystem, environment: environment)
        for source in sources { try walk.read(source) }
        return walk.aliases
    }

    // MARK: - Final values

    /// ssh.c: HostName with `%h` (the alias as typed) and `%%` expanded, else the alias; then
    /// lowercased unless it is an address, and an IPv4 address written out in full.
    private func hostname(_ setting: SSHConfigSetting?, alias: [UInt8]) throws(SSHConfigError) -> String {
        var bytes = alias
        if let setting {
            do {
                bytes = try SSHConfigExpansion.expand(
                    Array(setting.value.utf8), tokens: [UInt8(ascii: "h"): alias],
                    limit: SSHConfigLimits.maxHostNameBytes)
            } catch {
                throw Self.expansionError(error, keyword: "HostName", setting: setting)
            }
        }
        let name = text(bytes)
        if let address = Self.ipv4(name) { return address }
        if Self.isIPv6(name) { return name }
        return text(bytes.map(asciiLowercased))
    }

    private func expandIdentityFile(
        _ setting: SSHConfigSetting, alias: String, hostname: String, user: String, port: Int, hostKeyAlias: String?
    ) throws(SSHConfigError) -> String? {
        // ssh skips `none` when it loads keys (ssh.c load_public_identity_files).
        if setting.value.lowercased() == "none" { return nil }
        let local = environment.localHostname
        var tokens: [UInt8: [UInt8]] = [
            UInt8(ascii: "d"): Array(environment.homeDirectory.utf8),
            UInt8(ascii: "h"): Array(hostname.utf8),
            UInt8(ascii: "k"): Array((hostKeyAlias ?? alias).utf8),
            UInt8(ascii: "L"): Array(local.prefix { $0 != "." }.utf8),
            UInt8(ascii: "l"): Array(local.utf8),
            UInt8(ascii: "n"): Array(alias.utf8),
            UInt8(ascii: "p"): Array(String(port).utf8),
            UInt8(ascii: "r"): Array(user.utf8),
            UInt8(ascii: "u"): Array(environment.localUser.utf8),
        ]
        var unsupported: Set<UInt8> = [UInt8(ascii: "C")]
        if let uid = environment.userID {
            tokens[UInt8(ascii: "i")] = Array(String(uid).utf8)
        } else {
            unsupported.insert(UInt8(ascii: "i"))
        }
        do {
            let home = try SSHConfigExpansion.expandTilde(
                Array(setting.value.utf8), localUser: environment.localUser, home: environment.homeDirectory,
                homeOfUser: environment.homeOfUser)
            return text(
                try SSHConfigExpansion.expand(
                    home, tokens: tokens, unsupported: unsupported, variables: environment.variables,
                    limit: SSHConfigLimits.maxPathBytes))
        } catch {
            throw Self.expansionError(error, keyword: "IdentityFile", setting: setting)
        }
    }

    private static func expansionError(
        _ failure: SSHConfigExpansion.Failure, keyword: String, setting: SSHConfigSetting
    ) -> SSHConfigError {
        let value = "\(keyword) \(setting.value)"
        switch failure {
        case .unknownToken(let token):
            return SSHConfigError(.unknownToken, "\(value): unknown token %\(text([token]))", at: setting.location)
        case .trailingPercent:
            return SSHConfigError(.unknownToken, "\(value): a lone % at the end (write %% for %)", at: setting.location)
        case .unsupportedToken(let token):
            return SSHConfigError(
                .unsupportedToken, "\(value): herdr-remote does not expand the token %\(text([token]))",
                at: setting.location)
        case .missingVariable(let name):
            return SSHConfigError(
                .environmentVariable, "\(value): environment variable ${\(name)} has no value", at: setting.location)
        case .badVariable:
            return SSHConfigError(
                .environmentVariable, "\(value): ${ without a name and a closing }", at: setting.location)
        case .unknownUser(let name):
            return SSHConfigError(.unknownUser, "\(value): no such user \(name)", at: setting.location)
        case .tooLong:
            return SSHConfigError(.valueTooLong, "\(value) is too long once expanded", at: setting.location)
        }
    }

    /// How ssh_config(5) spells the noted keywords, for notes.
    private static let spelling = [
        "canonicalizehostname": "CanonicalizeHostname", "localcommand": "LocalCommand", "tunnel": "Tunnel",
        "localforward": "LocalForward", "remoteforward": "RemoteForward", "dynamicforward": "DynamicForward",
        "forwardagent": "ForwardAgent", "hostkeyalias": "HostKeyAlias", "bindaddress": "BindAddress",
        "bindinterface": "BindInterface", "identityagent": "IdentityAgent", "certificatefile": "CertificateFile",
        "remotecommand": "RemoteCommand",
    ]

    // MARK: - Addresses and aliases

    /// An IPv4 address in any form getaddrinfo(AI_NUMERICHOST) takes (inet_aton's `127.1`,
    /// `0x7f.1`, `2130706433`), written as ssh then prints it; nil for anything else.
    static func ipv4(_ name: String) -> String? {
        guard !name.isEmpty, !name.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else { return nil }
        var address = in_addr()
        guard inet_aton(name, &address) != 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return text(buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
    }

    /// An IPv6 address (with or without a `%zone`), which ssh leaves as written.
    static func isIPv6(_ name: String) -> Bool {
        let address = name.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard address.contains(":") else { return false }
        var bytes = in6_addr()
        return inet_pton(AF_INET6, String(address), &bytes) == 1
    }

    /// What ssh's command line takes as a host: 1 to ``SSHConfigLimits/maxAliasBytes`` bytes, no
    /// blanks or control characters (they cannot be typed as one argument and match nothing),
    /// no `@` (ssh splits `user@host`), not starting with `-` (an option); and UTF-8, so that a
    /// listed alias given back as a String is the same bytes (two patterns that are not would
    /// both read as the same U+FFFD-filled name, which matches neither).
    static func isValidAlias(_ bytes: [UInt8]) -> Bool {
        !bytes.isEmpty && bytes.count <= SSHConfigLimits.maxAliasBytes && bytes.first != UInt8(ascii: "-")
            && !bytes.contains { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "@") }
            && String(validating: bytes, as: UTF8.self) != nil
    }
}
