import CLISupport
import Testing

@Suite struct HelpFormatterTests {
    private func help(_ arguments: [String]) throws -> String {
        guard case .help(let text) = try Fixtures.parse(arguments) else { throw Fixtures.FixtureError.notARun }
        return text
    }

    @Test func leafCommandHelpHasEverySection() throws {
        let text = try help(["add", "--help"])
        let expected = """
            OVERVIEW: Add a host profile.

            Profiles are stored in the host store.

            USAGE: herdr-remote add [--port <port>] [--user <login>] [--tag <tag> ...]
                                    [--force] [--verbose ...] <name> <host> [<note>]

            ARGUMENTS:
              <name>                  The profile name.
              <host>                  Host name or address.
              <note>                  Free text.

            OPTIONS:
              -p, --port <port>       SSH port. (default: 22)
              -u, --user <login>      Remote login name.
              -t, --tag <tag>         A label. (repeatable)
              -f, --force             Replace an existing profile.
              -v, --verbose           Say more. (repeatable)
              -h, --help              Show help information.

            EXIT CODES:
              0     Success.
              64    Usage error: the command line was wrong.
              10    The host key was refused.

            """
        #expect(text == expected)
    }

    @Test func rootHelpListsSubcommandsAndVersion() throws {
        let text = try help(["--help"])
        #expect(text.contains("USAGE: herdr-remote [--quiet] <subcommand>\n"))
        #expect(text.contains("  --version               Show the version.\n"))
        #expect(text.contains("SUBCOMMANDS:\n  add                     Add a host profile.\n"))
        #expect(text.contains("  pins                    Manage host key pins.\n"))
        #expect(text.contains("  See 'herdr-remote <subcommand> --help' for detailed help.\n"))
        #expect(!text.contains("EXIT CODES"))
        // --version belongs to the root only.
        #expect(!(try help(["pins", "-h"])).contains("--version"))
    }

    @Test func requiredOptionAndRepeatingArgumentInUsage() throws {
        #expect(try help(["login", "-h"]).contains("USAGE: herdr-remote login --token <token>\n"))
        #expect(try help(["exec", "-h"]).contains("USAGE: herdr-remote exec <host> <command> ...\n"))
    }

    @Test func longTextWrapsAt80ColumnsAlignedToTheDescriptionColumn() throws {
        let words = Array(repeating: "lorem ipsum dolor", count: 20).joined(separator: " ")
        let spec = CommandSpec(
            name: "tool", abstract: words,
            discussion: words + "\n\nExample:\n\n    tool --a-very-long-option-name-indeed value  # kept as written",
            options: [
                OptionSpec("a-very-long-option-name-indeed", valueName: "value", help: words),
                OptionSpec("short", help: words),
            ],
            exitCodes: [ExitCode(3, meaning: words)],
            handler: { _ in .success })
        let text = HelpFormatter.help(for: spec, path: ["tool"])
        for line in text.split(separator: "\n") where !line.contains("# kept as written") {
            #expect(line.count <= 80, "too wide: \(line)")
        }
        #expect(text.contains("\n    tool --a-very-long-option-name-indeed value  # kept as written\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // A label too wide for its column puts the description on the next line, at column 26.
        let wide = try #require(lines.firstIndex(of: "  --a-very-long-option-name-indeed <value>"))
        #expect(lines[wide + 1].hasPrefix(String(repeating: " ", count: 26) + "lorem"))
        // Continuation lines of a description start at column 26 too.
        let short = try #require(lines.firstIndex { $0.hasPrefix("  --short <short>") })
        #expect(lines[short].dropFirst(26).hasPrefix("lorem"))
        #expect(lines[short + 1].hasPrefix(String(repeating: " ", count: 26) + "lorem"))
        // Exit code meanings wrap under their own column.
        let code = try #require(lines.firstIndex { $0.hasPrefix("  3     lorem") })
        #expect(lines[code + 1].hasPrefix(String(repeating: " ", count: 8) + "lorem"))
    }

    @Test func usageLineAlone() {
        #expect(
            HelpFormatter.usage(for: Fixtures.exec, path: ["herdr-remote", "exec"])
                == "USAGE: herdr-remote exec <host> <command> ...")
    }
}
