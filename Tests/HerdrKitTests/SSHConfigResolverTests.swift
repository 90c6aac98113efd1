import Foundation
import Glibc
import TestSupport
import Testing

@testable import HerdrKit

/// One config resolved by `SSHConfigResolver` and by the real `ssh -G`: they must agree on
/// hostname, user, port, identityfile, proxyjump and proxycommand, or both refuse the config;
/// `expect` pins what the case is about (checked on ssh's answer, which ours must equal), so
/// that a case both sides get wrong the same way cannot pass.
struct SSHConfigCase: Sendable, CustomTestStringConvertible {
    let name: String
    let files: [String: String]
    let alias: String
    var expect: [String: String] = [:]
    var failure: SSHConfigError.Kind?
    var refusal: SSHConfigRefusal.Kind?

    var testDescription: String { name }

    static func config(
        _ name: String, _ text: String, alias: String = "foo", expect: [String: String] = [:],
        failure: SSHConfigError.Kind? = nil, refusal: SSHConfigRefusal.Kind? = nil, more: [String: String] = [:]
    ) -> SSHConfigCase {
        SSHConfigCase(
            name: name, files: more.merging([".ssh/config": text]) { $1 }, alias: alias, expect: expect,
            failure: failure, refusal: refusal)
    }

    /// An Include chain `depth` files deep whose last file sets User.
    static func chain(depth: Int) -> [String: String] {
        var files: [String: String] = [".ssh/config": "Include $ROOT/chain/1\n"]
        for level in 1..<depth { files["$ROOT/chain/\(level)"] = "Include $ROOT/chain/\(level + 1)\n" }
        files["$ROOT/chain/\(depth)"] = "User deep\n"
        return files
    }

    static let all: [SSHConfigCase] = [
        config(
            "first value wins across blocks",
            "Host foo\n  User first\nHost foo\n  User second\n  Port 2201\nHost *\n  Port 2202\n  User third\n",
            expect: ["user": "first", "port": "2201"]),
        config(
            "Host * defaults after specific hosts",
            "Host studio\n  HostName studio.lan\nHost *\n  User everyone\n  Port 2022\n", alias: "studio",
            expect: ["hostname": "studio.lan", "user": "everyone", "port": "2022"]),
        config("? matches one character", "Host web?\n  User q\n", alias: "web1", expect: ["user": "q"]),
        config(
            "? matches exactly one character", "Host web?\n  User q\n  Port 2000\n", alias: "web12",
            expect: ["port": "22"]),
        config(
            "a negated pattern rejects the line", "Host *.example.com !bad.example.com\n  User a\nHost *\n  User b\n",
            alias: "bad.example.com", expect: ["user": "b"]),
        config(
            "the other patterns of a line with a negation still match",
            "Host *.example.com !bad.example.com\n  User a\nHost *\n  User b\n", alias: "x.example.com",
            expect: ["user": "a"]),
        config(
            "a line of negations alone matches nothing", "Host !bad\n  Port 2100\n", alias: "other",
            expect: ["port": "22"]),
        config(
            "several patterns on one Host line", "Host alpha beta gamma\n  Port 2345\n", alias: "beta",
            expect: ["port": "2345"]),
        config(
            "= between keyword and value, with and without spaces",
            "Host=foo\nUser=bob\nPort = 2200\nHostName =x.example\nIdentityFile= /k1\n",
            expect: ["user": "bob", "port": "2200", "hostname": "x.example", "identityfile": "/k1"]),
        config(
            "quoted values with spaces", "Host foo\n  IdentityFile \"/path with space/key\"\n  User \"bo b\"\n",
            expect: ["user": "bo b", "identityfile": "/path with space/key"]),
        config(
            "quotes and escapes inside a word", "Host foo\n  User a'b c'd\n  HostName h\\ 1\n",
            expect: ["user": "ab cd", "hostname": "h 1"]),
        config(
            "keywords in any case", "HOST foo\n  hOsTnAmE Mixed.Example.COM\n  USER u\n",
            expect: ["hostname": "mixed.example.com", "user": "u"]),
        config(
            "Host patterns match the alias case-sensitively", "Host foo\n  User lower\nHost FOO\n  User upper\n",
            alias: "FOO", expect: ["user": "upper", "hostname": "foo"]),
        config(
            "%h in HostName is the alias as typed, then lowercased", "Host *\n  HostName %h.tail.ts.net\n",
            alias: "Studio", expect: ["hostname": "studio.tail.ts.net"]),
        config("%% in HostName", "Host foo\n  HostName a%%b%h\n", expect: ["hostname": "a%bfoo"]),
        config(
            "IdentityFile tokens are kept as written",
            "Host foo\n  User bob\n  IdentityFile ~/.ssh/id_%h_%r\n  IdentityFile %d/keys/%u\n",
            expect: ["identityfile": "~/.ssh/id_%h_%r"]),
        config(
            "IdentityFile: duplicates once, none kept, Host * after",
            "Host foo\n  IdentityFile /a\n  IdentityFile none\n  IdentityFile /a\nHost *\n  IdentityFile /c\n",
            expect: ["identityfile": "/a"]),
        config(
            "Include by absolute path", "Host foo\n  Include $ROOT/inc/a.conf\n", expect: ["user": "fromabs"],
            more: ["$ROOT/inc/a.conf": "User fromabs\n"]),
        config(
            "Include by glob, files in sorted order", "Include $ROOT/inc/*.conf\n",
            expect: ["user": "a", "port": "2001"],
            more: ["$ROOT/inc/b.conf": "Host foo\n  User b\n  Port 2001\n", "$ROOT/inc/a.conf": "Host foo\n  User a\n"]),
        config(
            "a relative Include is under ~/.ssh", "Include conf.d/*\n", expect: ["hostname": "ten.example"],
            more: [".ssh/conf.d/10-foo": "Host foo\n  HostName ten.example\n"]),
        config(
            "Include ~/ in a user file", "Include ~/.ssh/extra\n", expect: ["port": "2999"],
            more: [".ssh/extra": "Port 2999\n"]),
        config(
            "an Include in a block that matches applies", "Host foo\n  Include $ROOT/inc/u.conf\n",
            expect: ["user": "inc"],
            more: ["$ROOT/inc/u.conf": "User inc\n"]),
        config(
            "an Include in a block that does not match never matches",
            "Host other\n  Include $ROOT/inc/u.conf\nHost *\n  User last\n", expect: ["user": "last"],
            more: ["$ROOT/inc/u.conf": "Host foo\n  User never\n"]),
        config(
            "a Host line in an included file ends with that file",
            "Host foo\n  Include $ROOT/inc/h.conf\n  User after\n",
            expect: ["user": "after"], more: ["$ROOT/inc/h.conf": "Host other\n  User other\n"]),
        config(
            "a missing Include is not an error", "Include $ROOT/nothere.conf $ROOT/none*.conf\nHost foo\n  User x\n",
            expect: ["user": "x"]),
        config(
            "a Match that does not apply is skipped", "Match host nomatch\n  User m\nHost foo\n  Port 2003\n",
            expect: ["port": "2003"]),
        config(
            "ProxyJump is refused", "Host foo\n  ProxyJump bob@bastion:2222\n",
            expect: ["proxyjump": "bob@bastion:2222"],
            refusal: .proxyJump),
        config(
            "ProxyCommand is refused", "Host foo\n  ProxyCommand nc %h %p\n", expect: ["proxycommand": "nc %h %p"],
            refusal: .proxyCommand),
        config(
            "ProxyCommand is taken unsplit, comment included", "Host foo\n  ProxyCommand=  \"nc\" %h # via nc\n",
            expect: ["proxycommand": "\"nc\" %h # via nc"], refusal: .proxyCommand),
        config(
            "ProxyCommand none is accepted and stops a later ProxyJump",
            "Host foo\n  ProxyCommand none\n  ProxyJump bastion\n", expect: ["user": "root"]),
        config(
            "ProxyJump none does not stop a later ProxyCommand",
            "Host foo\n  ProxyJump none\nHost *\n  ProxyCommand nc %h %p\n", expect: ["proxycommand": "nc %h %p"],
            refusal: .proxyCommand),
        config(
            "ProxyJump none stops a later ProxyJump", "Host foo\n  ProxyJump NONE\nHost *\n  ProxyJump bastion\n",
            expect: ["port": "22"]),
        config(
            "the first of ProxyJump and ProxyCommand decides",
            "Host foo\n  ProxyJump b1 # note\nHost *\n  ProxyCommand nc\n",
            expect: ["proxyjump": "b1"], refusal: .proxyJump),
        config("a bad port", "Host foo\n  Port 0\n", failure: .badPort),
        config("a bad port in a block that does not apply", "Host other\n  Port 70000\n", failure: .badPort),
        config("a port by service name", "Host foo\n  Port ssh\n", expect: ["port": "22"]),
        config("a port with a sign", "Host foo\n  Port +2022\n", expect: ["port": "2022"]),
        config("an unterminated quote", "Host foo\n  HostName \"a b\n", failure: .unterminatedQuote),
        config("an unterminated quote mid-word", "Host foo\n  User a\"b\n", failure: .unterminatedQuote),
        config(
            "a keyword whose quote is not closed is no line", "Host foo\n  \"User q\n  Port 2004\n",
            expect: ["port": "2004"]),
        config(
            "a quoted keyword", "\"User\" quoted\n", expect: ["user": "quoted"]),
        config(
            "comments: whole line, and a # starting a value",
            "# top\nHost foo # note\n  HostName bar # note\n  User u#1\n",
            expect: ["hostname": "bar", "user": "u#1"]),
        config(
            "CRLF, tabs, form feed and blank lines", "\r\nHost foo\r\n\t User\tcrlf \u{0C}\r\n\r\n  =Port 2005\r\n",
            expect: ["user": "crlf", "port": "2005"]),
        config("an IPv4 address in short form", "Host foo\n  HostName 127.1\n", expect: ["hostname": "127.0.0.1"]),
        config(
            "an IPv6 address keeps its case", "Host foo\n  HostName FE80::ABCD\n", expect: ["hostname": "FE80::ABCD"]),
        config("extra arguments", "Host foo\n  HostName a b\n", failure: .extraArguments),
        config("no argument", "Host foo\n  HostName\n", failure: .missingArgument),
        config("an empty Host pattern", "Host \"\"\n  User a\n", failure: .emptyArgument),
        config("an empty Include", "Include \"\"\n", failure: .emptyArgument),
        SSHConfigCase(name: "Includes 16 deep", files: chain(depth: 16), alias: "foo", expect: ["user": "deep"]),
        SSHConfigCase(name: "Includes 17 deep", files: chain(depth: 17), alias: "foo", failure: .includeDepth),
        config("a file including itself", "Host foo\n  Include $HOME/.ssh/config\n", failure: .includeDepth),
        config(
            "100 IdentityFiles", (1...100).map { "IdentityFile /k\($0)\n" }.joined(), expect: ["identityfile": "/k1"]),
        config(
            "101 IdentityFiles", (1...101).map { "IdentityFile /k\($0)\n" }.joined(), failure: .tooManyIdentityFiles),
        config(
            "duplicate IdentityFiles do not count towards 100",
            (1...99).map { "IdentityFile /k\($0)\n" }.joined() + String(repeating: "IdentityFile /k1\n", count: 5)
                + "IdentityFile /k100\n", expect: ["identityfile": "/k1"]),
    ]
}

@Suite struct SSHConfigResolverTests {
    @Test(arguments: SSHConfigCase.all)
    func agreesWithSSHG(_ example: SSHConfigCase) throws {
        let fixture = try SSHConfigFixture(example.files)
        let ssh = try fixture.sshG(example.alias)
        let resolver = try fixture.resolver()
        if let failure = example.failure {
            #expect(ssh.status != 0, "ssh -G accepted what should fail: \(ssh.values)")
            #expect {
                _ = try resolver.resolve(alias: example.alias)
            } throws: { error in
                (error as? SSHConfigError)?.kind == failure
            }
            return
        }
        try #require(ssh.status == 0, "ssh -G failed: \(ssh.stderr)")
        for (key, value) in example.expect {
            #expect(ssh.one(key) == value, "ssh -G's \(key) is not what the case is about")
        }
        let resolution = try resolver.resolve(alias: example.alias)
        #expect(resolution.hostname == ssh.one("hostname"))
        #expect(resolution.user == ssh.one("user"))
        #expect(String(resolution.port) == ssh.one("port"))
        let identityFiles =
            resolution.usesDefaultIdentityFiles
            ? SSHConfigResolver.defaultIdentityFiles : resolution.identityFileSettings.map(\.written)
        #expect(identityFiles == ssh.all("identityfile"))
        #expect(resolution.proxyJump?.value == ssh.one("proxyjump"))
        #expect(resolution.proxyCommand?.value == ssh.one("proxycommand"))
        #expect(resolution.refusal?.kind == example.refusal)
    }

    /// ssh -G prints IdentityFile as written; ssh expands it when it loads the keys, after the
    /// TCP connection. So ssh connects (`-v`) to a loopback socket that accepts and closes, and
    /// the paths it logs ("identity file PATH type -1") are compared with ours. ssh takes `~`
    /// and `%d` from the password database here, so the resolver gets the real account.
    @Test func identityFilesExpandAsSSHLoadsThem() throws {
        let (listener, port) = try LoopbackSocket.listen()
        defer { close(listener) }
        let acceptor = Thread {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                close(connection)
            }
        }
        acceptor.start()
        defer { shutdown(listener, Int32(SHUT_RDWR)) }
        let fixture = try SSHConfigFixture([
            ".ssh/config": """
            Host Studio
              HostName 127.0.0.1
              Port \(port)
              User Bob
              IdentityFile ~/.ssh/id_%h_%r_%u_%p_%n_%%
              IdentityFile %d/k2-%l-%L
              IdentityFile ${HERDR_TEST_KEYS}/k3
              IdentityFile ~root/k4
              IdentityFile none
              IdentityFile %k-%i

            """
        ])
        let result = try ProcessRunner.run(
            "/usr/bin/ssh",
            [
                "-v", "-F", fixture.path(".ssh/config"), "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "Studio",
                "true",
            ],
            environment: ["HOME": fixture.home, "PATH": "/usr/bin:/bin", "HERDR_TEST_KEYS": "/srv/keys"], timeout: 30)
        // ssh logs with CRLF line ends.
        let logged = result.stderr.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).compactMap {
            line -> String? in
            guard line.hasPrefix("debug1: identity file "), line.contains(" type ") else {
                return nil
            }
            let path = line.dropFirst("debug1: identity file ".count).split(separator: " ").dropLast(2).joined(
                separator: " ")
            return path.hasSuffix("-cert") ? nil : path
        }
        var environment = try SSHConfigEnvironment.current()
        environment.variables = ["HERDR_TEST_KEYS": "/srv/keys"]
        let resolution = try SSHConfigResolver.file(fixture.path(".ssh/config"), environment: environment)
            .resolve(alias: "Studio")
        let home =
            environment.homeDirectory.hasSuffix("/") ? environment.homeDirectory : environment.homeDirectory + "/"
        #expect(
            resolution.identityFiles.first == home + ".ssh/id_127.0.0.1_Bob_\(environment.localUser)_\(port)_Studio_%")
        #expect(resolution.identityFiles.count == 5)
        #expect(resolution.identityFiles == logged, "ssh -v said: \(result.stderr)")
    }

    @Test func aMatchBlockIsSkippedWithANote() throws {
        let fixture = try SSHConfigFixture([".ssh/config": "Host foo\n  Port 2003\nMatch host nomatch\n  User m\n"])
        let resolution = try fixture.resolver().resolve(alias: "foo")
        #expect(resolution.user != "m")
        #expect(
            resolution.notes == [
                "~/.ssh/config line 3: Match blocks are not evaluated; the lines up to the next Host or Match were skipped (ssh may apply them)"
            ])
    }

    @Test func aRefusalSaysWhatAndWhere() throws {
        let fixture = try SSHConfigFixture([
            ".ssh/config": "Host *\n  User me\n\nHost studio\n  ProxyJump bastion\n",
            ".ssh/other": "Host box\n  ProxyCommand ssh -W %h:%p gate\n",
        ])
        let jump = try fixture.resolver().resolve(alias: "studio")
        #expect(
            jump.refusal?.reason
                == "studio uses ProxyJump bastion (~/.ssh/config line 5); herdr-remote cannot connect through a jump host yet"
        )
        #expect(jump.refusal?.setting.location.line == 5)
        let command = try fixture.resolver(file: ".ssh/other").resolve(alias: "box")
        #expect(
            command.refusal?.reason
                == "box uses ProxyCommand ssh -W %h:%p gate (~/.ssh/other line 2); herdr-remote cannot connect through a proxy command yet"
        )
        #expect(try fixture.resolver().resolve(alias: "other").refusal == nil)
    }

    /// ssh 9.2 refuses a file with a keyword it does not know; herdr-remote reads on with a note,
    /// since a newer ssh's keyword (or macOS's UseKeychain) is no reason to refuse the host.
    @Test func anUnknownKeywordIsANoteWhereSSHFails() throws {
        let fixture = try SSHConfigFixture([".ssh/config": "Host foo\n  UseKeychain yes\n  User u\n"])
        #expect(try fixture.sshG("foo").status != 0)
        let resolution = try fixture.resolver().resolve(alias: "foo")
        #expect(resolution.user == "u")
        #expect(
            resolution.notes == [
                "~/.ssh/config line 2: usekeychain is not an OpenSSH 9.2 keyword and was ignored (ssh 9.2 itself refuses such a file)"
            ])
    }

    @Test func anIncludedFileOthersCanWriteIsRefusedAsSSHRefusesIt() throws {
        let fixture = try SSHConfigFixture([".ssh/config": "Include $ROOT/open.conf\n", "$ROOT/open.conf": "User x\n"])
        #expect(chmod(fixture.path("$ROOT/open.conf"), 0o666) == 0)
        #expect(try fixture.sshG("foo").status != 0)
        #expect {
            _ = try fixture.resolver().resolve(alias: "foo")
        } throws: { error in
            let error = error as? SSHConfigError
            return error?.kind == .badPermissions && error?.location?.line == 1
        }
    }

    @Test func notesForWhatAnImportLeavesBehind() throws {
        let fixture = try SSHConfigFixture([
            ".ssh/config": """
            Host foo
              RemoteCommand tmux attach
              LocalForward 8080 localhost:80
              ForwardAgent no
              CanonicalizeHostname yes
              IdentityFile keys/rel
            Host *
              RemoteCommand other

            """
        ])
        let resolution = try fixture.resolver().resolve(alias: "foo")
        #expect(resolution.remoteCommand?.value == "tmux attach")
        #expect(
            resolution.notes == [
                "~/.ssh/config line 6: IdentityFile keys/rel is a relative path, which ssh reads from the directory it runs in",
                "~/.ssh/config line 2: RemoteCommand tmux attach is run by ssh instead of a shell; the import does not keep it (herdr-remote runs herdr's attach command)",
                "~/.ssh/config line 3: LocalForward 8080 forwards a port; herdr-remote sets up no forwarding",
                "~/.ssh/config line 5: CanonicalizeHostname yes makes ssh qualify the name with CanonicalDomains and read the config again for the result; herdr-remote connects to the hostname as resolved here",
            ])
    }

    @Test func errorsNameTheFileAndLine() throws {
        let fixture = try SSHConfigFixture([
            ".ssh/config": "Host foo\n  Include bad.conf\n", ".ssh/bad.conf": "\n\nPort 0\n",
        ])
        #expect(try fixture.sshG("foo").stderr.contains("bad.conf line 3: Bad port '0'"))
        let resolver = try fixture.resolver()
        do {
            _ = try resolver.resolve(alias: "foo")
            Issue.record("a bad port was accepted")
        } catch {
            #expect(error.kind == .badPort)
            #expect(error.description == "~/.ssh/bad.conf line 3: Bad port '0' (a port is 1 to 65535)")
        }
    }

    @Test func theStandardPairReadsTheUserFileFirstAndAMissingOneIsFine() throws {
        let files = InMemorySSHConfigFileSystem([
            "/home/me/.ssh/config": "Host foo\n  User fromuser\n",
            "/etc/ssh/ssh_config": "Host *\n  User fromsystem\n  Port 2200\n",
        ])
        let environment = SSHConfigEnvironment(localUser: "me", homeDirectory: "/home/me", localHostname: "box")
        let both = try SSHConfigResolver.standard(environment: environment, fileSystem: files).resolve(alias: "foo")
        #expect(both.user == "fromuser")
        #expect(both.port == 2200)
        #expect(both.portSetting?.location.displayPath == "/etc/ssh/ssh_config")
        let systemOnly = InMemorySSHConfigFileSystem(["/etc/ssh/ssh_config": "User fromsystem\n"])
        #expect(
            try SSHConfigResolver.standard(environment: environment, fileSystem: systemOnly).resolve(alias: "foo").user
                == "fromsystem")
        #expect {
            _ = try SSHConfigResolver.file("/home/me/.ssh/nothere", environment: environment, fileSystem: files)
                .resolve(alias: "foo")
        } throws: { ($0 as? SSHConfigError)?.kind == .missingFile }
    }

    /// The real pair on this machine (the account's `~/.ssh/config`, if any, and
    /// `/etc/ssh/ssh_config` with its Includes) read as plain `ssh -G` reads them.
    @Test func theStandardPairOnThisMachineAgreesWithPlainSSH() throws {
        let alias = "herdr-sshconfig-probe"
        let ssh = try ProcessRunner.run("/usr/bin/ssh", ["-G", alias], timeout: 30)
        try #require(ssh.status == 0, "ssh -G failed: \(ssh.stderr)")
        let value = { (key: String) in
            ssh.stdout.split(separator: "\n").filter { $0.hasPrefix(key + " ") }.map {
                String($0.dropFirst(key.count + 1))
            }
        }
        let resolution = try SSHConfigResolver.standard(environment: try .current()).resolve(alias: alias)
        #expect([resolution.hostname] == value("hostname"))
        #expect([resolution.user] == value("user"))
        #expect([String(resolution.port)] == value("port"))
        let identityFiles =
            resolution.usesDefaultIdentityFiles
            ? SSHConfigResolver.defaultIdentityFiles : resolution.identityFileSettings.map(\.written)
        #expect(identityFiles == value("identityfile"))
    }

    @Test func theSystemFileRefusesTildeAndFindsRelativeIncludesInEtcSSH() throws {
        let environment = SSHConfigEnvironment(localUser: "me", homeDirectory: "/home/me", localHostname: "box")
        let relative = InMemorySSHConfigFileSystem([
            "/etc/ssh/ssh_config": "Include ssh_config.d/*.conf\n", "/etc/ssh/ssh_config.d/a.conf": "User a\n",
            "/home/me/.ssh/ssh_config.d/a.conf": "User wrong\n",
        ])
        let resolver = SSHConfigResolver(sources: [.systemConfig], fileSystem: relative, environment: environment)
        #expect(try resolver.resolve(alias: "foo").user == "a")
        let tilde = InMemorySSHConfigFileSystem(["/etc/ssh/ssh_config": "Include ~/x\n"])
        #expect {
            _ = try SSHConfigResolver(sources: [.systemConfig], fileSystem: tilde, environment: environment)
                .resolve(alias: "foo")
        } throws: { ($0 as? SSHConfigError)?.kind == .badIncludePath }
    }

    @Test func identityFileTokensOutsideWhatIsExpandedAreErrorsNamingThem() throws {
        let environment = SSHConfigEnvironment(localUser: "me", homeDirectory: "/home/me", localHostname: "box")
        func failure(_ value: String) -> String? {
            let files = InMemorySSHConfigFileSystem(["/c": "IdentityFile \(value)\n"])
            do {
                _ = try SSHConfigResolver.file("/c", environment: environment, fileSystem: files).resolve(alias: "foo")
                return nil
            } catch {
                return error.description
            }
        }
        #expect(failure("/k%j") == "/c line 1: IdentityFile /k%j: unknown token %j")
        #expect(failure("/k%C") == "/c line 1: IdentityFile /k%C: herdr-remote does not expand the token %C")
        #expect(failure("/k%i") == "/c line 1: IdentityFile /k%i: herdr-remote does not expand the token %i")
        #expect(failure("/k%") == "/c line 1: IdentityFile /k%: a lone % at the end (write %% for %)")
        #expect(failure("${NOPE}/k") == "/c line 1: IdentityFile ${NOPE}/k: environment variable ${NOPE} has no value")
        #expect(failure("~nobody/k") == "/c line 1: IdentityFile ~nobody/k: no such user nobody")
        #expect(failure("/k%h") == nil)
    }

    @Test func anInvalidAliasIsRefusedBeforeAnyFileIsRead() throws {
        let environment = SSHConfigEnvironment(localUser: "me", homeDirectory: "/home/me", localHostname: "box")
        let resolver = SSHConfigResolver.file(
            "/nothere", environment: environment, fileSystem: InMemorySSHConfigFileSystem([:]))
        for alias in ["", "a b", "bob@host", "-oProxyCommand=x", "a\u{0}b", String(repeating: "a", count: 1025)] {
            #expect {
                _ = try resolver.resolve(alias: alias)
            } throws: { ($0 as? SSHConfigError)?.kind == .invalidAlias }
        }
        #expect {
            _ = try resolver.resolve(alias: String(repeating: "a", count: 1024))
        } throws: { ($0 as? SSHConfigError)?.kind == .missingFile }
    }
}
