import Foundation
import TestSupport
import Testing

/// The completion scripts the real programs print, run in the real shells: every subcommand and
/// option their help lists is offered, and herdr-remote's saved host names come from hosts.json
/// written by `herdr-remote add`.
@Suite struct ProgramCompletionTests {
    /// A config directory with two hosts saved by the real `herdr-remote add`, the scripts the
    /// programs print, and an environment with the built programs first on PATH.
    final class Setup: Sendable {
        let directory: TemporaryDirectory
        let config: TemporaryDirectory

        init(hosts: [String] = ["studio", "my box"]) throws {
            directory = try TemporaryDirectory(prefix: "program-completion-")
            config = try TemporaryDirectory(prefix: "program-completion-config-")
            for host in hosts {
                _ = try Programs.run(
                    "herdr-remote", ["add", host, "--host", "\(host.count).ts.net"], environment: environment)
            }
            for program in Programs.names {
                for shell in ["bash", "zsh", "fish"] {
                    let script = try Programs.run(program, ["--generate-completion-script", shell])
                    let name = shell == "zsh" ? "_\(program)" : "\(program).\(shell)"
                    try script.write(to: directory.file(name), atomically: true, encoding: .utf8)
                }
            }
        }

        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["PATH"] = Programs.directory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            environment["XDG_CONFIG_HOME"] = config.path
            environment["XDG_DATA_HOME"] = config.appending("data").path
            return environment
        }

        func bash(_ words: String...) throws -> [String] {
            try ShellCompletion.bash(
                script: directory.file("\(words[0]).bash").path,
                function: "_" + words[0].replacingOccurrences(of: "-", with: "_"), words: words,
                environment: environment)
        }

        func zsh(_ line: String) throws -> [String] {
            try ShellCompletion.zsh(functionDirectory: directory.path, line: line, environment: environment)
        }

        func fish(_ line: String) throws -> [String] {
            let program = String(line.prefix { $0 != " " })
            return try ShellCompletion.fish(
                script: directory.file("\(program).fish").path, line: line, environment: environment
            ).sorted()
        }
    }

    @Test func bashOffersEverySubcommandAndOptionHelpLists() throws {
        let setup = try Setup()
        // The help reading finds what is there.
        let remote = try Programs.commands(of: "herdr-remote")
        #expect(remote.count == 13)
        #expect(remote.first { $0.path == ["herdr-remote", "add"] }?.options.contains("-p") == true)
        #expect(remote[0].options == ["--version", "-h", "--help"])
        for program in Programs.names {
            for command in try Programs.commands(of: program) {
                let words = command.path + ["-"]
                let offered = try ShellCompletion.bash(
                    script: setup.directory.file("\(program).bash").path,
                    function: "_" + program.replacingOccurrences(of: "-", with: "_"), words: words,
                    environment: setup.environment)
                #expect(Set(offered) == Set(command.options), "\(command.path.joined(separator: " ")) -")
                if !command.subcommands.isEmpty {
                    let subcommands = try ShellCompletion.bash(
                        script: setup.directory.file("\(program).bash").path,
                        function: "_" + program.replacingOccurrences(of: "-", with: "_"), words: command.path + [""],
                        environment: setup.environment)
                    #expect(subcommands == command.subcommands, "\(command.path.joined(separator: " "))")
                }
            }
        }
    }

    @Test func bashCompletesSavedHostNamesAndValues() throws {
        let setup = try Setup()
        #expect(try setup.bash("herdr-remote", "con") == ["connect"])
        #expect(try setup.bash("herdr-remote", "connect", "") == [#"my\ box"#, "studio"])
        #expect(try setup.bash("herdr-remote", "connect", "s") == ["studio"])
        #expect(try setup.bash("herdr-remote", "remove", "m") == [#"my\ box"#])
        #expect(try setup.bash("herdr-remote", "password", "--clear", "") == [#"my\ box"#, "studio"])
        #expect(try setup.bash("herdr-remote", "connect", "--road", "") == ["home", "relay"])
        #expect(try setup.bash("herdr-remote", "add", "x", "--platform", "w") == ["windows"])
        #expect(try setup.bash("herdr-remote", "connect", "--", "-") == [])
        #expect(try setup.bash("herdr-host", "config", "g") == ["grace-period"])
        #expect(try setup.bash("herdr-relay", "serve", "--appattest-env", "") == ["production", "development"])
        #expect(try setup.bash("herdr-pair", "--s") == ["--session", "--state"])
    }

    @Test func noSavedHostsCompleteToNothing() throws {
        let setup = try Setup(hosts: [])
        #expect(try setup.bash("herdr-remote", "connect", "") == [])
    }

    @Test func zshLoadsEveryProgramsScriptAndCompletes() throws {
        let setup = try Setup()
        for program in Programs.names {
            let result = try ProcessRunner.run(
                ProcessRunner.which("zsh"), ["-n", setup.directory.file("_\(program)").path])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(program): \(result.stderr)")
        }
        #expect(try setup.zsh("herdr-remote con") == ["connect"])
        #expect(try setup.zsh("herdr-remote connect ") == ["my box", "studio"])
        #expect(try setup.zsh("herdr-host config home-") == ["home-listen", "home-refuse"])
        #expect(try setup.zsh("herdr-relay ") == ["import-original", "probe", "serve"])
        #expect(try setup.zsh("herdr-pair --stat") == ["--state"])
    }

    @Test func fishLoadsEveryProgramsScriptAndCompletes() throws {
        let setup = try Setup()
        for program in Programs.names {
            let result = try ProcessRunner.run(
                ProcessRunner.which("fish"), ["--no-execute", setup.directory.file("\(program).fish").path])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(program): \(result.stderr)")
        }
        #expect(try setup.fish("herdr-remote con") == ["connect"])
        #expect(try setup.fish("herdr-remote connect ") == ["my box", "studio"])
        #expect(try setup.fish("herdr-remote add x --platform ") == ["unix", "windows"])
        #expect(try setup.fish("herdr-host config home-") == ["home-listen", "home-refuse"])
        #expect(try setup.fish("herdr-relay ") == ["import-original", "probe", "serve"])
    }
}
