import Foundation
import TestSupport
import Testing

@testable import HerdrKit

@Suite struct HerdrCommandTests {
    // interop-facts §2, character for character.
    @Test func attachStringsMatchTheInteropTable() {
        #expect(HerdrCommand.attach(platform: .unix, session: nil) == #"exec "$SHELL" -lc 'herdr'"#)
        #expect(
            HerdrCommand.attach(platform: .unix, session: "work")
                == #"exec "$SHELL" -lc 'herdr session attach work'"#)
        #expect(HerdrCommand.attach(platform: .windows, session: nil) == "herdr")
        #expect(HerdrCommand.attach(platform: .windows, session: "work") == "herdr session attach work")
    }

    @Test func validNamesStayBare() {
        let name = "herdr-ios_test.2"
        #expect(
            HerdrCommand.attach(platform: .unix, session: name)
                == "exec \"$SHELL\" -lc 'herdr session attach \(name)'")
        #expect(HerdrCommand.attach(platform: .windows, session: name) == "herdr session attach \(name)")
    }

    @Test func posixQuoting() {
        #expect(HerdrCommand.posixQuoted("") == "''")
        #expect(HerdrCommand.posixQuoted("a b") == "'a b'")
        #expect(HerdrCommand.posixQuoted("it's") == #"'it'\''s'"#)
        #expect(HerdrCommand.posixQuoted("$(x)`y`") == "'$(x)`y`'")
    }

    @Test func powerShellQuoting() {
        #expect(HerdrCommand.powerShellQuoted("") == "''")
        #expect(HerdrCommand.powerShellQuoted("it's") == "'it''s'")
        #expect(HerdrCommand.powerShellQuoted("a\u{2019}b") == "'a\u{2019}\u{2019}b'")
        #expect(HerdrCommand.powerShellQuoted("$(x) `y` \"z\"") == "'$(x) `y` \"z\"'")
    }

    @Test func invalidWindowsNamesAreQuotedForPowerShell() {
        #expect(HerdrCommand.attach(platform: .windows, session: "") == "herdr session attach ''")
        #expect(HerdrCommand.attach(platform: .windows, session: "a b") == "herdr session attach 'a b'")
        #expect(
            HerdrCommand.attach(platform: .windows, session: "x'; calc; '") == "herdr session attach 'x''; calc; '''")
        #expect(HerdrCommand.attach(platform: .windows, session: "..") == "herdr session attach '..'")
    }

    @Test func invalidUnixNamesAreQuotedTwice() {
        // Inner script `herdr session attach 'a b'`, then quoted again for the outer shell.
        #expect(
            HerdrCommand.attach(platform: .unix, session: "a b")
                == #"exec "$SHELL" -lc 'herdr session attach '\''a b'\'''"#)
        #expect(
            HerdrCommand.attach(platform: .unix, session: "")
                == #"exec "$SHELL" -lc 'herdr session attach '\'''\'''"#)
    }

    static let hostileNames: [String] = [
        "$(touch pwned)",
        "`touch pwned`",
        "; touch pwned",
        "'",
        "x'; touch pwned; '",
        "x'\u{301}; touch pwned; '",  // a quote carrying a combining mark is still a quote to the shell
        "\"",
        "\"; touch pwned; \"",
        "a b",
        "",
        "line\ntouch pwned",
        "..",
        ".",
        "-x",
        String(repeating: "a", count: 65),
        "*",
        "$HOME",
        "back\\slash",
        "|| touch pwned",
        "ünïcödé",
    ]

    /// The unix command goes through a real `/bin/sh -c` (as sshd runs it) and then `$SHELL -lc`; a fake
    /// herdr on PATH records its argv. herdr must receive exactly `session attach <name>`, and nothing the
    /// name spells may run.
    @Test(arguments: hostileNames + ["work", "herdr-ios-test"])
    func unixCommandPassesTheNameAsOneLiteralArgument(name: String) throws {
        let sandbox = try ShellSandbox()
        let argv = try sandbox.run(HerdrCommand.attach(platform: .unix, session: name))
        #expect(argv == ["session", "attach", name])
        #expect(try sandbox.cwd.listing("cwd") == ["decoy"])
    }

    @Test func defaultSessionRunsBareHerdrThroughTheShell() throws {
        let sandbox = try ShellSandbox()
        #expect(try sandbox.run(HerdrCommand.attach(platform: .unix, session: nil)) == [])
    }

    @Test func nulInAnInvalidNameBecomesAReplacementCharacter() throws {
        let sandbox = try ShellSandbox()
        let argv = try sandbox.run(HerdrCommand.attach(platform: .unix, session: "a\u{0}$(touch pwned)"))
        #expect(argv == ["session", "attach", "a\u{FFFD}$(touch pwned)"])
        #expect(try sandbox.cwd.listing("cwd") == ["decoy"])
        #expect(!HerdrCommand.attach(platform: .windows, session: "a\u{0}b").contains("\u{0}"))
    }

    @Test func validNamesNeedNoQuotingAnywhere() {
        for name in ["a", "A.b_c-9", String(repeating: "z", count: 64)] {
            #expect(!HerdrCommand.attach(platform: .unix, session: name).contains("'\\''"))
        }
    }
}

/// A temp dir with a fake `herdr` on the login shell's PATH, a HOME whose `.profile` puts it there (a login
/// shell's /etc/profile resets PATH), and an otherwise empty working directory to catch stray files.
private struct ShellSandbox {
    let cwd: TemporaryDirectory
    private let argvFile: URL
    private let environment: [String: String]

    init() throws {
        cwd = try TemporaryDirectory()
        let bin = cwd.file("bin")
        let home = cwd.file("home")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: cwd.file("cwd"), withIntermediateDirectories: true)
        // A file for `*` to glob onto if quoting failed.
        try writeText("", to: cwd.file("cwd/decoy"))
        argvFile = cwd.file("argv")
        // The count, then each argument, NUL-separated, so arguments with newlines are recorded exactly.
        let herdr = bin.appendingPathComponent("herdr")
        try writeText(
            "#!/bin/sh\n{ printf '%s\\0' \"$#\"; printf '%s\\0' \"$@\"; } > \"$HERDR_ARGV_FILE\"\n", to: herdr)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: herdr.path)
        try writeText("PATH=\"\(bin.path):$PATH\"\nexport PATH\n", to: home.appendingPathComponent(".profile"))
        environment = [
            "SHELL": "/bin/sh", "HOME": home.path, "PATH": "/usr/bin:/bin", "HERDR_ARGV_FILE": argvFile.path,
        ]
    }

    /// Runs `command` as sshd would (`sh -c command`) and returns the argv herdr received.
    func run(_ command: String) throws -> [String] {
        let result = try ProcessRunner.run(
            "/bin/sh", ["-c", command], environment: environment, currentDirectory: cwd.file("cwd"))
        guard result.status == 0 else { throw FixtureError("sh exited \(result.status): \(result.stderr)") }
        let recorded = try Data(contentsOf: argvFile)
        let fields = recorded.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard let count = fields.first.flatMap({ Int($0) }) else { throw FixtureError("no argv recorded") }
        // With no arguments the second printf still prints one empty field; either way one empty piece
        // follows the last NUL.
        let expectedPieces = 1 + max(count, 1) + 1
        #expect(fields.count == expectedPieces)
        return Array(fields.dropFirst().prefix(count))
    }
}
