import CLISupport
import Foundation
import TestSupport
import Testing

/// The completion scripts, run in the real shells against ``CompletionFixtures/tool``.
@Suite struct BashCompletionScriptTests {
    let installation: CompletionFixtures.Installation

    init() throws {
        installation = try CompletionFixtures.Installation(.bash)
    }

    private func complete(_ words: String..., in directory: URL? = nil) throws -> [String] {
        try ShellCompletion.bash(
            script: installation.script, function: "_tool", words: words, environment: installation.environment,
            currentDirectory: directory)
    }

    @Test func subcommandsAtEveryDepth() throws {
        #expect(try complete("tool", "") == ["connect", "list", "copy", "pins"])
        #expect(try complete("tool", "c") == ["connect", "copy"])
        #expect(try complete("tool", "pins", "") == ["forget", "list"])
        // A root flag before the subcommand belongs to the root and does not end the path.
        #expect(try complete("tool", "-q", "pins", "f") == ["forget"])
    }

    @Test func optionsOfTheSelectedCommandOnly() throws {
        #expect(try complete("tool", "-") == ["--quiet", "-q", "--version", "--help", "-h"])
        #expect(try complete("tool", "connect", "-") == ["--road", "-r", "--verbose", "-v", "--help", "-h"])
        #expect(try complete("tool", "pins", "forget", "--") == ["--format", "--help"])
        // --version is the root's alone.
        #expect(try complete("tool", "list", "--v") == [])
    }

    @Test func optionValuesInEveryForm() throws {
        #expect(try complete("tool", "connect", "--road", "") == ["home", "relay"])
        #expect(try complete("tool", "connect", "-r", "h") == ["home"])
        #expect(try complete("tool", "connect", "-vr", "") == ["home", "relay"])
        // bash splits --road=r at '=' (COMP_WORDBREAKS); as one word it keeps its prefix.
        #expect(try complete("tool", "connect", "--road", "=") == ["home", "relay"])
        #expect(try complete("tool", "connect", "--road", "=", "r") == ["relay"])
        #expect(try complete("tool", "connect", "--road=r") == ["--road=relay"])
        #expect(try complete("tool", "pins", "forget", "--format", "") == ["json", "text"])
    }

    @Test func positionalsFromTheProgramItself() throws {
        // The value after --road is skipped, so the next word is the host.
        #expect(try complete("tool", "connect", "--road", "home", "") == ["alpha", #"beta\ box"#])
        #expect(try complete("tool", "connect", "b") == [#"beta\ box"#])
        #expect(try complete("tool", "connect", #"beta\ "#) == [#"beta\ box"#])
        #expect(try complete("tool", "pins", "forget", "a") == ["alpha"])
    }

    @Test func filesAndDirectories() throws {
        let directory = try TemporaryDirectory(prefix: "completion-files-")
        try FileManager.default.createDirectory(at: directory.file("sub"), withIntermediateDirectories: false)
        try "x".write(to: directory.file("notes.txt"), atomically: true, encoding: .utf8)
        #expect(try complete("tool", "copy", "", in: directory.url) == ["sub"])
        #expect(try complete("tool", "copy", "sub", "", in: directory.url).sorted() == ["notes.txt", "sub"])
        #expect(try complete("tool", "copy", "sub", "notes.txt", "n", in: directory.url) == ["notes.txt"])
        #expect(try complete("tool", "copy", "--log", "n", in: directory.url) == ["notes.txt"])
    }

    @Test func noOptionAfterDoubleDash() throws {
        #expect(try complete("tool", "connect", "--", "-") == [])
        #expect(try complete("tool", "--", "") == [])
        // Words after -- still count as positionals: the second one is a file.
        let directory = try TemporaryDirectory(prefix: "completion-files-")
        try "x".write(to: directory.file("-notes"), atomically: true, encoding: .utf8)
        #expect(try complete("tool", "copy", "--", "sub", "-", in: directory.url) == ["-notes"])
    }

    @Test func optionsWhenNoArgumentIsLeft() throws {
        #expect(try complete("tool", "connect", "alpha", "") == ["--road", "-r", "--verbose", "-v", "--help", "-h"])
        #expect(try complete("tool", "list", "") == ["--names", "--help", "-h"])
    }
}

@Suite struct ZshCompletionScriptTests {
    @Test func theScriptParses() throws {
        let installation = try CompletionFixtures.Installation(.zsh)
        let result = try ProcessRunner.run(ProcessRunner.which("zsh"), ["-n", installation.script])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
    }

    @Test func compinitFindsItAndItCompletes() throws {
        let installation = try CompletionFixtures.Installation(.zsh)
        func complete(_ line: String) throws -> [String] {
            try ShellCompletion.zsh(
                functionDirectory: installation.directory.path, line: line, environment: installation.environment)
        }
        #expect(try complete("tool c") == ["connect", "copy"])
        #expect(try complete("tool pins ") == ["forget", "list"])
        #expect(try complete("tool connect -") == ["--help", "--road", "--verbose", "-h", "-r", "-v"])
        #expect(try complete("tool connect --road ") == ["home", "relay"])
        #expect(try complete("tool connect --road=r") == ["relay"])
        #expect(try complete("tool connect ") == ["alpha", "beta box"])
        #expect(try complete("tool connect -- -") == [])
    }
}

@Suite struct FishCompletionScriptTests {
    @Test func theScriptParses() throws {
        let installation = try CompletionFixtures.Installation(.fish)
        let result = try ProcessRunner.run(ProcessRunner.which("fish"), ["--no-execute", installation.script])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
    }

    @Test func fishCompletes() throws {
        let installation = try CompletionFixtures.Installation(.fish)
        func complete(_ line: String) throws -> [String] {
            try ShellCompletion.fish(script: installation.script, line: line, environment: installation.environment)
                .sorted()
        }
        #expect(try complete("tool c") == ["connect", "copy"])
        #expect(try complete("tool pins ") == ["forget", "list"])
        #expect(try complete("tool connect -") == ["--help", "--road", "--verbose", "-h", "-r", "-v"])
        #expect(try complete("tool --") == ["--help", "--quiet", "--version"])
        #expect(try complete("tool connect --road ") == ["home", "relay"])
        #expect(try complete("tool connect -vr ") == ["home", "relay"])
        #expect(try complete("tool connect --road home ") == ["alpha", "beta box"])
        #expect(try complete("tool pins forget --format=j") == ["--format=json"])
        #expect(try complete("tool connect -- -") == [])
    }
}
