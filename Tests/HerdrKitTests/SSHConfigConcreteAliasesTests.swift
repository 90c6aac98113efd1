import TestSupport
import Testing

@testable import HerdrKit

/// The aliases `SSHConfigResolver.concreteAliases()` lists for importing several hosts at once.
@Suite struct SSHConfigConcreteAliasesTests {
    let environment = SSHConfigEnvironment(localUser: "me", homeDirectory: "/home/me", localHostname: "box")

    func aliases(_ files: [String: String], sources: [SSHConfigSource]? = nil) throws -> [String] {
        let resolver = SSHConfigResolver(
            sources: sources ?? [.explicit("/home/me/.ssh/config")], fileSystem: InMemorySSHConfigFileSystem(files),
            environment: environment)
        return try resolver.concreteAliases().map(\.name)
    }

    @Test func concretePatternsInFileOrderOnce() throws {
        let config = "Host b a\n  Port 1\nHost a c\nHost *.lan web? !x y\nHost \"#q\"\n"
        let listed = try aliases(["/home/me/.ssh/config": config])
        #expect(listed == ["b", "a", "c", "y", "#q"])
    }

    /// Under `Host *` every alias reaches the Include; under `Host first` only `first` would.
    @Test func includesAreFollowedWhereTheyStand() throws {
        let files = [
            "/home/me/.ssh/config": "Host first\nHost *\n  Include conf.d/*\nHost last\n",
            "/home/me/.ssh/conf.d/1": "Host one\n", "/home/me/.ssh/conf.d/2": "Host two first\n",
        ]
        let listed = try aliases(files)
        #expect(listed == ["first", "one", "two", "last"])
    }

    @Test func anAliasInsideAnIncludeMustAlsoMatchTheHostLineAroundIt() throws {
        let files = [
            "/home/me/.ssh/config": "Host *.lan\n  Include lan.conf\nMatch all\n  Include match.conf\n",
            "/home/me/.ssh/lan.conf": "Host studio.lan nas\n  User u\n",
            "/home/me/.ssh/match.conf": "Host hidden\n",
        ]
        #expect(try aliases(files) == ["studio.lan"])
        let resolver = SSHConfigResolver.file(
            "/home/me/.ssh/config", environment: environment, fileSystem: InMemorySSHConfigFileSystem(files))
        #expect(try resolver.resolve(alias: "studio.lan").user == "u")
        #expect(try resolver.resolve(alias: "nas").user == "me")
    }

    @Test func anAliasItsOwnLineRejectsIsNotListed() throws {
        #expect(try aliases(["/home/me/.ssh/config": "Host studio !studio\nHost bob@box -x ok\n"]) == ["ok"])
    }

    /// Found by the ssh-config fuzz target (Fuzz/regressions/ssh-config/two-patterns-not-utf8):
    /// two Host patterns of different non-UTF-8 bytes were both listed, under one and the same
    /// name full of U+FFFD, which resolves to neither.
    @Test func patternsThatAreNotUTF8AreNotListed() throws {
        let bytes =
            Array("Host ".utf8) + [0xA3, 0x90, 0x90] + Array("\nHost ".utf8) + [0x98, 0x90, 0x90]
            + Array("\nHost caf\u{E9}\n".utf8)
        let resolver = SSHConfigResolver.file(
            "/c", environment: environment, fileSystem: InMemorySSHConfigFileSystem(bytes: ["/c": bytes]))
        #expect(try resolver.concreteAliases().map(\.name) == ["caf\u{E9}"])
    }

    @Test func bothFilesOfTheStandardPairOnce() throws {
        let files = [
            "/home/me/.ssh/config": "Host mine shared\n", "/etc/ssh/ssh_config": "Host shared theirs\nHost *\n",
        ]
        #expect(
            try aliases(files, sources: [.userConfig(home: "/home/me"), .systemConfig]) == ["mine", "shared", "theirs"])
    }

    @Test func eachListedAliasResolvesToItsOwnBlock() throws {
        let fixture = try SSHConfigFixture([
            ".ssh/config": "Include more.conf\nHost alpha\n  HostName alpha.example\nHost *\n  HostName other\n",
            ".ssh/more.conf": "Host beta\n  HostName beta.example\n",
        ])
        let resolver = try fixture.resolver()
        let listed = try resolver.concreteAliases()
        #expect(listed.map(\.name) == ["beta", "alpha"])
        #expect(listed.map(\.location.description) == ["~/.ssh/more.conf line 1", "~/.ssh/config line 2"])
        for alias in listed {
            #expect(try resolver.resolve(alias: alias.name).hostname == "\(alias.name).example")
            #expect(try fixture.sshG(alias.name).one("hostname") == "\(alias.name).example")
        }
    }

    @Test func aFileSSHWouldRefuseIsAnError() throws {
        #expect {
            try aliases(["/home/me/.ssh/config": "Host a\nHost b\n  Port 0\n"])
        } throws: { ($0 as? SSHConfigError)?.kind == .badPort }
        #expect {
            try aliases(["/home/me/.ssh/config": "Host a \"\"\n"])
        } throws: { ($0 as? SSHConfigError)?.kind == .emptyArgument }
        // After a Match, a Host line's Include is read as for an alias that reaches it.
        let afterMatch = [
            "/home/me/.ssh/config": "Match all\nHost *\n  Include x.conf\n", "/home/me/.ssh/x.conf": "Host a \"\"\n",
        ]
        #expect {
            try aliases(afterMatch)
        } throws: { ($0 as? SSHConfigError)?.kind == .emptyArgument }
    }
}
