import Foundation
import TestSupport
import Testing

/// herdr-remote as a person or a script uses it: help, usage errors, hosts, keys, pins.
@Suite("herdr-remote commands")
struct CommandLineTests {
    @Test("--help lists the subcommands and every distinct exit code")
    func help() throws {
        let cli = try CLIHarness()
        let result = try cli.run(["--help"])
        #expect(result.status == 0)
        for word in ["hosts", "add", "remove", "connect", "key", "forget-host-key", "password"] {
            #expect(result.stdout.contains("\n  \(word) "))
        }
        for code in ["10", "11", "12", "13", "14", "64"] {
            #expect(result.stdout.contains("\n  \(code) "), "exit code \(code) missing from --help")
        }
        #expect(try cli.run(["connect", "--help"]).stdout.contains("EXIT CODES"))
    }

    @Test("the overview and the man page's NAME line say there are three roads, not only SSH")
    func overviewNamesTheThreeRoads() throws {
        let cli = try CLIHarness()
        let help = try cli.run(["--help"]).stdout
        // OVERVIEW's wrapped lines hang at column 10.
        let overview = help.components(separatedBy: "\n\n")[0].replacingOccurrences(of: "\n          ", with: " ")
        let manual = try cli.run(["--generate-manual"]).stdout
        let name = try #require(manual.components(separatedBy: "\n.SH NAME\n").last?.split(separator: "\n").first)
        for text in [overview, String(name)] {
            for road in ["over SSH", "through a relay", "on the home network"] {
                #expect(text.contains(road), "\(road) in \(text)")
            }
        }
    }

    @Test("usage errors exit 64 with a message that says what to fix")
    func usageErrors() throws {
        let cli = try CLIHarness()
        let missing = try cli.run(["add", "studio"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--host is required"))
        let typo = try cli.run(["conect"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("did you mean 'connect'"))
        // Beside --help too: general help and 0 would make a typo look like a real command.
        let tunnels = try cli.run(["tunnels", "--help"])
        #expect(tunnels.status == 64 && tunnels.stdout.isEmpty)
        #expect(tunnels.stderr == "error: unknown subcommand 'tunnels'. See 'herdr-remote --help'.\n")
        let agentsHelp = try cli.run(["agents", "--help"])
        #expect(agentsHelp.status == 0 && agentsHelp.stdout.contains("USAGE: herdr-remote agents"))
        let interval = try cli.run(["watch", "--interval", "0"])
        #expect(interval.status == 64)
        #expect(interval.stderr.contains("--interval' must be an integer in 1...60"))
        let exec = try cli.run(["watch", "--exec", "no-such-program-anywhere --flag"])
        #expect(exec.status == 64)
        #expect(exec.stderr.contains("no program no-such-program-anywhere"))
        let quote = try cli.run(["watch", "--exec", "sh -c 'unclosed"])
        #expect(quote.status == 64 && quote.stderr.contains("a ' is not closed"))
        let target = try cli.run(["connect", "nowhere", "--agent", "a/b/c"])
        #expect(target.status == 64)
        let typoHelp = try cli.run(["conect", "studio", "-h"])
        #expect(typoHelp.status == 64 && typoHelp.stderr.contains("did you mean 'connect'"))
        let port = try cli.run(["add", "x", "--host", "h", "--port", "70000"])
        #expect(port.status == 64)
        let session = try cli.run(["add", "x", "--host", "h", "--session", "$(reboot)"])
        #expect(session.status == 64)
        #expect(session.stderr.contains("invalid herdr session name"))
        let unknown = try cli.run(["connect", "nowhere"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("no host named 'nowhere'"))
    }

    @Test("add, hosts, remove: profiles round-trip and a duplicate needs --replace")
    func hostProfiles() throws {
        let cli = try CLIHarness()
        #expect(
            try cli.run([
                "add", "studio", "--host", "Studio.TS.net.", "--port", "2200", "--user", "alice", "--session", "work",
            ]).status == 0)
        let listing = try cli.run(["hosts"]).stdout
        #expect(listing.contains("studio"))
        #expect(listing.contains("alice@studio.ts.net:2200"))
        #expect(listing.contains("work"))
        #expect(listing.contains("not pinned yet"))
        #expect(try cli.run(["add", "studio", "--host", "other"]).status == 1)
        #expect(try cli.run(["add", "studio", "--host", "other", "--replace"]).status == 0)
        #expect(try cli.run(["hosts"]).stdout.contains("@other:22"))
        #expect(try cli.run(["remove", "studio"]).status == 0)
        #expect(try cli.run(["hosts"]).stdout.contains("No hosts yet"))
        #expect(try fileMode(cli.directory.appendingPathComponent("hosts.json").path) == 0o600)
    }

    @Test("hosts --names: the names alone, sorted, one a line (for completion); nothing when there are none")
    func hostNames() throws {
        let cli = try CLIHarness()
        let none = try cli.run(["hosts", "--names"])
        #expect(none.status == 0)
        #expect(none.stdout.isEmpty && none.stderr.isEmpty)
        #expect(try cli.run(["add", "studio", "--host", "studio.ts.net"]).status == 0)
        #expect(try cli.run(["add", "my box", "--host", "box.ts.net"]).status == 0)
        let names = try cli.run(["hosts", "--names"])
        #expect(names.status == 0)
        #expect(names.stdout == "my box\nstudio\n")
    }

    @Test("key prints the same public key ssh-keygen derives from the private key file")
    func key() throws {
        let cli = try CLIHarness()
        let printed = try cli.run(["key"])
        #expect(printed.status == 0)
        #expect(printed.stderr.contains("Created a device key"))
        let file = cli.directory.appendingPathComponent("id_ed25519").path
        #expect(try fileMode(file) == 0o600)
        let derived = try sshKeygen(["-y", "-f", file]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == derived)
        let again = try cli.run(["key"])
        #expect(again.stdout == printed.stdout)
        #expect(!again.stderr.contains("Created"))
        let fingerprint = try cli.run(["key", "--fingerprint"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try sshKeygen(["-l", "-E", "sha256", "-f", file]).stdout.contains(fingerprint))
    }

    @Test("password stores the secret outside hosts.json, and --clear removes it")
    func password() throws {
        let cli = try CLIHarness()
        #expect(try cli.run(["add", "box", "--host", "box"]).status == 0)
        #expect(try cli.run(["password", "box"], input: "s3cret-value\n").status == 0)
        let secrets = try readText(cli.directory.appendingPathComponent("secrets.json"))
        #expect(secrets.contains("s3cret-value"))
        #expect(try fileMode(cli.directory.appendingPathComponent("secrets.json").path) == 0o600)
        #expect(!(try readText(cli.directory.appendingPathComponent("hosts.json"))).contains("s3cret"))
        #expect(try cli.run(["password", "box", "--clear"]).status == 0)
        #expect(!(try readText(cli.directory.appendingPathComponent("secrets.json"))).contains("s3cret-value"))
    }
}
