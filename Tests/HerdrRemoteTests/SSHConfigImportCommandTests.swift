import Foundation
import Glibc
import TestSupport
import Testing

/// `add NAME --from-ssh-config [ALIAS]` and `import-ssh-config`, on configs given with `-F`, checked
/// against what the real `ssh -G -F` resolves and, end to end, by logging in to a real sshd.
@Suite("herdr-remote hosts from ssh config")
struct SSHConfigImportCommandTests {
    struct SavedHost: Decodable {
        let name: String
        let hostname: String
        let port: Int
        let username: String
        let identityFiles: [String]?
    }

    static func saved(_ cli: CLIHarness) throws -> [String: SavedHost] {
        let file = cli.directory.appendingPathComponent("hosts.json")
        guard FileManager.default.fileExists(atPath: file.path) else { return [:] }
        struct File: Decodable { let hosts: [SavedHost] }
        let data = try Data(contentsOf: file)
        let hosts: [SavedHost]
        if let wrapped = try? JSONDecoder().decode(File.self, from: data) {
            hosts = wrapped.hosts
        } else {
            hosts = try JSONDecoder().decode([SavedHost].self, from: data)
        }
        return Dictionary(uniqueKeysWithValues: hosts.map { ($0.name, $0) })
    }

    /// `ssh -G -F config alias`: its lowercase keyword lines, every value of each.
    static func sshG(_ config: URL, _ alias: String) throws -> [String: [String]] {
        let result = try ProcessRunner.run("ssh", ["-G", "-F", config.path, alias], check: true)
        var values: [String: [String]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2 { values[parts[0], default: []].append(parts[1]) }
        }
        return values
    }

    @Test("add --from-ssh-config saves what ssh -G resolves (first value wins, Host * after, Include) and logs in")
    func addMatchesSSHAndConnects() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let key = files.file("id_studio")
        try sshKeygen(["-q", "-t", "ed25519", "-N", "", "-f", key.path])
        try server.authorize(try readText(URL(fileURLWithPath: key.path + ".pub")))
        try writeText("Host studio\n  Port \(server.port)\n", to: files.file("included.conf"))
        let config = files.file("config")
        try writeText(
            """
            Include \(files.file("included.conf").path)
            Host studio
              HostName 127.0.0.1
              Port 1
              IdentityFile \(key.path)
            Host *
              User \(server.user.name)
              Port 2
            """, to: config)
        let cli = try CLIHarness()
        let added = try cli.run(
            ["add", "studio", "--from-ssh-config", "-F", config.path, "--command", "echo from-config; sleep 2.2"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("Saved studio from studio in "))
        let ssh = try Self.sshG(config, "studio")
        let host = try #require(try Self.saved(cli)["studio"])
        #expect([host.hostname] == ssh["hostname"])
        #expect([host.username] == ssh["user"])
        #expect([String(host.port)] == ssh["port"])
        #expect(host.port == server.port)
        #expect(host.identityFiles == [key.path])
        #expect(ssh["identityfile"] == [key.path])

        let connected = try cli.run(["connect", "studio", "--accept-new-host-key"])
        #expect(connected.status == 0, "\(connected.stderr)")
        #expect(connected.stdout.contains("from-config"))
    }

    @Test("options given on the command line win over the config; a second argument names the alias")
    func optionsWin() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let config = files.file("config")
        try writeText("Host build-box\n  HostName build.example.ts.net\n  User carol\n  Port 2200\n", to: config)
        let cli = try CLIHarness()
        let added = try cli.run(["add", "build", "--from-ssh-config", "build-box", "-F", config.path, "--port", "2222"])
        #expect(added.status == 0, "\(added.stderr)")
        let host = try #require(try Self.saved(cli)["build"])
        #expect(host.hostname == "build.example.ts.net")
        #expect(host.username == "carol")
        #expect(host.port == 2222)
    }

    @Test("a host needing ProxyJump or ProxyCommand is refused with the reason and nothing is saved")
    func proxiesRefused() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let config = files.file("config")
        try writeText(
            """
            Host behind
              HostName inner.example.com
              ProxyJump bastion.example.com
            Host piped
              ProxyCommand nc %h %p
            Host direct
              ProxyCommand none
              HostName direct.example.com
            """, to: config)
        let cli = try CLIHarness()
        let jump = try cli.run(["add", "behind", "--from-ssh-config", "-F", config.path])
        #expect(jump.status == 1)
        #expect(jump.stderr.contains("ProxyJump bastion.example.com"), "\(jump.stderr)")
        #expect(jump.stderr.contains("line 3"), "\(jump.stderr)")
        let piped = try cli.run(["add", "piped", "--from-ssh-config", "-F", config.path])
        #expect(piped.status == 1)
        #expect(piped.stderr.contains("ProxyCommand"), "\(piped.stderr)")
        #expect(try Self.saved(cli).isEmpty)
        let direct = try cli.run(["add", "direct", "--from-ssh-config", "-F", config.path])
        #expect(direct.status == 0, "\(direct.stderr)")
        #expect(try Self.saved(cli)["direct"]?.hostname == "direct.example.com")
    }

    @Test("import-ssh-config saves every alias without wildcards, skips refused and saved ones, and says why")
    func importSeveral() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let config = files.file("config")
        try writeText(
            """
            Host one two
              User dave
            Host one
              HostName one.example.com
            Host *.example.com tw?
              Port 2022
            Host behind
              ProxyJump bastion
            Match host nothing-matches-this
              User nobody
            """, to: config)
        let cli = try CLIHarness()
        let dry = try cli.run(["import-ssh-config", "-F", config.path, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("Would save one: dave@one.example.com:22"), "\(dry.stdout)")
        #expect(try Self.saved(cli).isEmpty)

        let imported = try cli.run(["import-ssh-config", "-F", config.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Saved one: dave@one.example.com:22"), "\(imported.stdout)")
        #expect(imported.stdout.contains("Saved two: dave@two:2022"), "\(imported.stdout)")
        #expect(imported.stdout.contains("Skipped behind: not imported: "), "\(imported.stdout)")
        #expect(imported.stdout.contains("Match"), "the skipped Match block is noted: \(imported.stdout)")
        #expect(Set(try Self.saved(cli).keys) == ["one", "two"])
        for alias in ["one", "two"] {
            let ssh = try Self.sshG(config, alias)
            let host = try #require(try Self.saved(cli)[alias])
            #expect(
                [host.hostname] == ssh["hostname"] && [host.username] == ssh["user"]
                    && [String(host.port)] == ssh["port"])
        }

        let listed = try cli.run(["import-ssh-config", "-F", config.path, "--list"])
        #expect(listed.status == 0)
        #expect(listed.stdout == "one\ntwo\nbehind\n", "\(listed.stdout)")

        let again = try cli.run(["import-ssh-config", "-F", config.path, "one"])
        #expect(again.status == 0)
        #expect(again.stdout.contains("Skipped one: a host of that name is saved already (--replace updates it)"))
        let named = try cli.run(["import-ssh-config", "-F", config.path, "behind"])
        #expect(named.status == 1, "a named alias that cannot be imported fails the command")
    }

    @Test("an alias without --from-ssh-config, or --host missing, is a usage error; a broken config names its line")
    func usageAndErrors() throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let cli = try CLIHarness()
        let alias = try cli.run(["add", "x", "y", "--host", "example.com"])
        #expect(alias.status == 64)
        #expect(try cli.run(["add", "x"]).stderr.contains("--host is required"))
        let config = files.file("config")
        try writeText("Host bad\n  Port 70000\n", to: config)
        let bad = try cli.run(["add", "bad", "--from-ssh-config", "-F", config.path])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("line 2"), "\(bad.stderr)")
        #expect(try Self.saved(cli).isEmpty)
    }

    /// An account whose home is `home`, made (once) for the tests that need ssh's own
    /// `~/.ssh/config`: ssh and the resolver find it through the password database, not `$HOME`.
    static func account(home: URL) throws -> (uid: String, gid: String) {
        let name = "herdrsshcfg"
        if getpwnam(name) == nil {
            try ProcessRunner.run("useradd", ["-M", "-d", home.path, "-s", "/bin/sh", name], check: true)
        } else {
            try ProcessRunner.run("usermod", ["-d", home.path, name], check: true)
        }
        let entry = try #require(getpwnam(name))
        let uid = entry.pointee.pw_uid
        let gid = entry.pointee.pw_gid
        try ProcessRunner.run("chown", ["-R", "\(uid):\(gid)", home.path], check: true)
        return (String(uid), String(gid))
    }

    @Test(
        "without -F, ~/.ssh/config of the account is read, as plain ssh -G reads it; connect hints at an unsaved alias")
    func userConfigAndHint() throws {
        let home = try TemporaryDirectory(prefix: "herdr-sshcfg-home-", mode: 0o755)
        defer { home.remove() }
        try FileManager.default.createDirectory(at: home.file(".ssh"), withIntermediateDirectories: true)
        try writeText(
            "Host studio box2\n  HostName studio.example.ts.net\n  User erin\n  Port 2201\n",
            to: home.file(".ssh/config"))
        chmod(home.file(".ssh/config").path, 0o600)
        let (uid, gid) = try Self.account(home: home.url)
        let program = try UserRunnableCopy.of(CLIHarness.executable)
        func asAccount(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run(
                "setpriv",
                [
                    "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "env", "HOME=\(home.path)",
                    "XDG_CONFIG_HOME=\(home.path)/.config", "SSH_AUTH_SOCK=",
                ] + arguments)
        }
        let added = try asAccount([program, "add", "studio", "--from-ssh-config"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(
            added.stdout.contains("Saved studio from studio in ~/.ssh/config: erin@studio.example.ts.net:2201"),
            "\(added.stdout)")
        let ssh = try asAccount(["ssh", "-G", "studio"])
        #expect(
            ssh.stdout.contains("\nhostname studio.example.ts.net\n") && ssh.stdout.contains("\nuser erin\n")
                && ssh.stdout.contains("\nport 2201\n"), "\(ssh.stdout)")
        let hint = try asAccount([program, "connect", "box2"])
        #expect(hint.status == 64)
        #expect(
            hint.stderr.contains("your ssh config has it: herdr-remote add box2 --from-ssh-config"), "\(hint.stderr)")
        let noHint = try asAccount([program, "connect", "elsewhere"])
        #expect(noHint.status == 64)
        #expect(!noHint.stderr.contains("ssh config"))
    }
}
