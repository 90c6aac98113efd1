import HerdrKit

extension FuzzTargets {
    /// The input's first line (at most 64 bytes) is the alias, the rest `~/.ssh/config`, read
    /// with `/etc/ssh/ssh_config` through an in-memory file system that also holds files
    /// including themselves (`loop`) or the config back (`back`), and one ssh would refuse for
    /// its permissions (`unsafe`). Resolving never fails but with an `SSHConfigError` (a
    /// line-level one naming its line), and gives the same answer twice and with CRLF line ends;
    /// a resolution keeps ssh's bounds (port 1...65535, a hostname, at most 100 IdentityFiles,
    /// a refusal exactly when a proxy is in effect). Listed aliases are distinct, resolvable
    /// names.
    static let sshConfig = FuzzTarget("ssh-config", "HerdrKit: ssh_config resolution as ssh -G (SSHConfigResolver)") {
        data in
        let newline = data.firstIndex(of: 0x0A) ?? data.count
        let alias = String(decoding: data[..<min(newline, 64)], as: UTF8.self)
        let config = newline < data.count ? Array(data[(newline + 1)...]) : []
        let first = SSHConfigFuzzing.resolve(alias, config: config)
        FuzzCheck.expect(first == SSHConfigFuzzing.resolve(alias, config: config), "two resolutions disagree")
        let crlf = config.flatMap { $0 == 0x0A ? [0x0D, 0x0A] : [$0] }
        FuzzCheck.expect(
            first == SSHConfigFuzzing.resolve(alias, config: crlf), "CRLF line ends change the resolution: \(first)")

        switch first {
        case .success(let resolution):
            FuzzCheck.expect((1...65535).contains(resolution.port), "port \(resolution.port)")
            FuzzCheck.expect(
                !resolution.hostname.isEmpty && resolution.hostname.utf8.count <= SSHConfigLimits.maxHostNameBytes,
                "hostname \(resolution.hostname.debugDescription)")
            FuzzCheck.expect(
                resolution.identityFileSettings.count <= SSHConfigLimits.maxIdentityFiles, "too many identity files")
            FuzzCheck.expect(
                resolution.identityFiles.allSatisfy { $0.utf8.count <= SSHConfigLimits.maxPathBytes },
                "an identity file path over the limit")
            switch resolution.refusal?.kind {
            case .proxyJump:
                FuzzCheck.expect(resolution.proxyJump != nil, "a ProxyJump refusal without ProxyJump")
            case .proxyCommand:
                FuzzCheck.expect(
                    resolution.proxyCommand != nil && resolution.proxyJump == nil, "a ProxyCommand refusal without it")
            case nil:
                FuzzCheck.expect(
                    resolution.proxyJump == nil && resolution.proxyCommand == nil, "a proxy in effect, no refusal")
            }
        case .failure(let error):
            FuzzCheck.expect(
                !SSHConfigFuzzing.lineErrors.contains(error.kind) || error.location != nil,
                "\(error.kind) without a line: \(error)")
            FuzzCheck.expect(!error.description.isEmpty, "an error without a description")
        }

        guard let aliases = try? SSHConfigFuzzing.resolver(config: config).concreteAliases() else { return }
        FuzzCheck.expect(Set(aliases.map(\.name)).count == aliases.count, "an alias listed twice")
        for listed in aliases.prefix(8) {
            if case .failure(let error) = SSHConfigFuzzing.resolve(listed.name, config: config) {
                FuzzCheck.expect(error.kind != .invalidAlias, "listed alias \(listed.name.debugDescription) refused")
            }
        }
    }
}

/// The fuzz target's fixed machine: one account, its config files in memory.
enum SSHConfigFuzzing {
    static let environment = SSHConfigEnvironment(
        localUser: "fuzz", homeDirectory: "/home/fuzz", userID: 1000, localHostname: "box.example",
        variables: ["HOME": "/home/fuzz"], servicePort: { $0 == "ssh" ? 22 : nil },
        homeOfUser: { $0 == "root" ? "/root" : nil })

    /// Errors that always come from one line.
    static let lineErrors: Set<SSHConfigError.Kind> = [
        .unterminatedQuote, .missingArgument, .extraArguments, .emptyArgument, .badPort, .unknownToken,
        .unsupportedToken, .environmentVariable, .badIncludePath, .lineTooLong, .tooManyLines,
        .tooManyIncludeMatches, .tooManyIdentityFiles, .valueTooLong, .globFailed,
    ]

    static func resolver(config: [UInt8]) -> SSHConfigResolver {
        let files = InMemorySSHConfigFileSystem(
            bytes: [
                "/home/fuzz/.ssh/config": config,
                "/home/fuzz/.ssh/loop": Array("Include loop\n".utf8),
                "/home/fuzz/.ssh/back": Array("Include config\n".utf8),
                "/home/fuzz/.ssh/unsafe": Array("User unsafe\n".utf8),
                "/home/fuzz/.ssh/conf.d/10-web": Array("Host web?\n  HostName %h.example\n  Port 2200\n".utf8),
                "/etc/ssh/ssh_config": Array("Host *\n  IdentityFile ~/.ssh/id_system\n  Port 2222\n".utf8),
            ], unsafePaths: ["/home/fuzz/.ssh/unsafe"])
        return SSHConfigResolver.standard(environment: environment, fileSystem: files)
    }

    static func resolve(_ alias: String, config: [UInt8]) -> Result<SSHConfigResolution, SSHConfigError> {
        Result { () throws(SSHConfigError) in try resolver(config: config).resolve(alias: alias) }
    }
}
