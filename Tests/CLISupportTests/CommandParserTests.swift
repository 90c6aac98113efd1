import CLISupport
import Testing

@Suite struct CommandParserTests {
    // MARK: Values

    @Test func longOptionsInBothFormsShortOptionsAndPositionals() throws {
        let (command, arguments) = try Fixtures.run(
            ["add", "--port", "2222", "--user=alice", "home", "home.example", "-t", "a", "-tb"])
        #expect(command == "add")
        #expect(arguments.commandPath == ["herdr-remote", "add"])
        #expect(try arguments.int("port", range: 1...65535) == 2222)
        #expect(arguments.string("user") == "alice")
        #expect(arguments.positional("name") == "home")
        #expect(arguments.positional("host") == "home.example")
        #expect(arguments.positional("note") == nil)
        #expect(arguments.strings("tag") == ["a", "b"])
        #expect(arguments.flag("force") == false)
    }

    @Test func defaultsApplyWhenAbsentAndDoNotCountAsGiven() throws {
        let (_, arguments) = try Fixtures.run(["add", "n", "h"])
        #expect(arguments.string("port") == "22")
        #expect(try arguments.int("port") == 22)
        #expect(!arguments.wasGiven("port"))
        #expect(arguments.string("user") == nil)
        #expect(arguments.strings("tag") == [])
    }

    @Test func shortOptionValueForms() throws {
        #expect(try Fixtures.run(["add", "-p", "1", "n", "h"]).arguments.string("port") == "1")
        #expect(try Fixtures.run(["add", "-p2", "n", "h"]).arguments.string("port") == "2")
        #expect(try Fixtures.run(["add", "-p=3", "n", "h"]).arguments.string("port") == "3")
        #expect(try Fixtures.run(["add", "--port=", "n", "h"]).arguments.string("port") == "")
    }

    @Test func bundledShortFlagsAndCounts() throws {
        let (_, arguments) = try Fixtures.run(["add", "-fvv", "n", "h", "-v"])
        #expect(arguments.flag("force"))
        #expect(arguments.flagCount("verbose") == 3)
        // A bundle may end with an option taking the rest as its value.
        let (_, bundled) = try Fixtures.run(["add", "-fp8022", "n", "h"])
        #expect(bundled.flag("force"))
        #expect(bundled.string("port") == "8022")
    }

    @Test func doubleDashEndsOptions() throws {
        let (_, arguments) = try Fixtures.run(["add", "--", "-n", "--port"])
        #expect(arguments.positional("name") == "-n")
        #expect(arguments.positional("host") == "--port")
        #expect(arguments.string("port") == "22")
        // `-h` after `--` is a value, not a help request.
        let (_, afterDashes) = try Fixtures.run(["exec", "box", "--", "ls", "-h"])
        #expect(afterDashes.positionals("command") == ["ls", "-h"])
    }

    @Test func repeatingPositionalTakesTheRestAndSingleDashIsAWord() throws {
        let (_, arguments) = try Fixtures.run(["exec", "box", "cat", "-"])
        #expect(arguments.positional("host") == "box")
        #expect(arguments.positionals("command") == ["cat", "-"])
    }

    @Test func parentOptionsBeforeTheSubcommandAreKept() throws {
        let (command, arguments) = try Fixtures.run(["-q", "pins", "forget", "box"])
        #expect(command == "forget")
        #expect(arguments.commandPath == ["herdr-remote", "pins", "forget"])
        #expect(arguments.flag("quiet"))
        #expect(arguments.positional("host") == "box")
    }

    // MARK: Usage errors

    @Test func unknownOptionSuggestsTheClosestName() throws {
        let error = try #require(Fixtures.usageError(["add", "--prot", "22", "n", "h"]))
        #expect(error.kind == .unknownOption)
        #expect(
            error.message == "error: unknown option '--prot'; did you mean '--port'? See 'herdr-remote add --help'.")
    }

    @Test func unknownOptionWithoutACloseName() throws {
        let error = try #require(Fixtures.usageError(["add", "--zzzzzz", "n", "h"]))
        #expect(error.message == "error: unknown option '--zzzzzz'. See 'herdr-remote add --help'.")
        let short = try #require(Fixtures.usageError(["add", "-x", "n", "h"]))
        #expect(short.message == "error: unknown option '-x'. See 'herdr-remote add --help'.")
    }

    @Test func singleDashLongNameSuggestsTheDoubleDash() throws {
        let error = try #require(Fixtures.usageError(["add", "-force", "n", "h"]))
        #expect(error.kind == .unknownOption)
        #expect(error.suggestion == "--force")
    }

    @Test func missingValue() throws {
        let atEnd = try #require(Fixtures.usageError(["add", "n", "h", "--port"]))
        #expect(atEnd.kind == .missingValue)
        #expect(atEnd.message == "error: missing value for option '--port <port>'. See 'herdr-remote add --help'.")
        let beforeOption = try #require(Fixtures.usageError(["add", "--user", "-f", "n", "h"]))
        #expect(beforeOption.kind == .missingValue)
        #expect(beforeOption.problem == "missing value for option '--user <login>'")
    }

    @Test func flagWithValue() throws {
        let error = try #require(Fixtures.usageError(["add", "--force=yes", "n", "h"]))
        #expect(error.kind == .unexpectedValue)
        #expect(error.problem == "flag '--force' takes no value")
    }

    @Test func missingRequiredPositional() throws {
        let error = try #require(Fixtures.usageError(["add", "n"]))
        #expect(error.kind == .missingArgument)
        #expect(error.message == "error: missing argument '<host>'. See 'herdr-remote add --help'.")
        let repeating = try #require(Fixtures.usageError(["exec", "box"]))
        #expect(repeating.problem == "missing argument '<command>'")
    }

    @Test func extraPositional() throws {
        let error = try #require(Fixtures.usageError(["add", "n", "h", "note", "extra"]))
        #expect(error.kind == .extraArgument)
        #expect(error.message == "error: unexpected argument 'extra'. See 'herdr-remote add --help'.")
    }

    @Test func repeatedNonRepeatableOption() throws {
        let error = try #require(Fixtures.usageError(["add", "-p", "1", "--port=2", "n", "h"]))
        #expect(error.kind == .repeatedOption)
        #expect(error.message == "error: option '--port' was given more than once. See 'herdr-remote add --help'.")
        let flag = try #require(Fixtures.usageError(["add", "-ff", "n", "h"]))
        #expect(flag.problem == "flag '--force' was given more than once")
    }

    @Test func unknownSubcommandSuggests() throws {
        let error = try #require(Fixtures.usageError(["ad", "n", "h"]))
        #expect(error.kind == .unknownSubcommand)
        #expect(error.message == "error: unknown subcommand 'ad'; did you mean 'add'? See 'herdr-remote --help'.")
        let nested = try #require(Fixtures.usageError(["pins", "lsit"]))
        #expect(
            nested.message == "error: unknown subcommand 'lsit'; did you mean 'list'? See 'herdr-remote pins --help'.")
        let far = try #require(Fixtures.usageError(["frobnicate"]))
        #expect(far.suggestion == nil)
    }

    @Test func missingSubcommand() throws {
        let error = try #require(Fixtures.usageError(["pins"]))
        #expect(error.kind == .missingSubcommand)
        #expect(error.message == "error: missing subcommand (one of: list, forget). See 'herdr-remote pins --help'.")
    }

    @Test func missingRequiredOption() throws {
        let error = try #require(Fixtures.usageError(["login"]))
        #expect(error.kind == .missingOption)
        #expect(error.message == "error: missing option '--token <token>'. See 'herdr-remote login --help'.")
    }

    @Test func optionOfTheParentAfterTheSubcommandIsUnknown() throws {
        let error = try #require(Fixtures.usageError(["pins", "list", "--quiet"]))
        #expect(error.kind == .unknownOption)
        #expect(error.commandPath == ["herdr-remote", "pins", "list"])
    }

    // MARK: Typed accessors

    @Test func intOutOfRangeNamesOptionAndRange() throws {
        let (_, arguments) = try Fixtures.run(["add", "--port", "70000", "n", "h"])
        #expect(throws: UsageError.self) { try arguments.int("port", range: 1...65535) }
        do {
            _ = try arguments.int("port", range: 1...65535)
        } catch {
            #expect(error.kind == .invalidValue)
            #expect(
                error.message
                    == "error: option '--port' must be an integer in 1...65535, got '70000'. See 'herdr-remote add --help'."
            )
        }
    }

    @Test func intNotANumber() throws {
        let (_, arguments) = try Fixtures.run(["add", "--port", "ssh", "n", "h"])
        do {
            _ = try arguments.int("port")
            Issue.record("expected a usage error")
        } catch {
            #expect(error.problem == "option '--port' must be an integer, got 'ssh'")
        }
        let (_, positional) = try Fixtures.run(["add", "n", "h", "x1"])
        do {
            _ = try positional.int("note")
            Issue.record("expected a usage error")
        } catch {
            #expect(error.problem == "argument '<note>' must be an integer, got 'x1'")
        }
    }

    @Test func intBoundsAreInclusive() throws {
        #expect(try Fixtures.run(["add", "-p", "1", "n", "h"]).arguments.int("port", range: 1...65535) == 1)
        #expect(try Fixtures.run(["add", "-p", "65535", "n", "h"]).arguments.int("port", range: 1...65535) == 65535)
        let (_, zero) = try Fixtures.run(["add", "-p", "0", "n", "h"])
        #expect(throws: UsageError.self) { try zero.int("port", range: 1...65535) }
    }

    // MARK: Help and version

    @Test func helpAnywherePrintsTheInnermostCommandsHelp() throws {
        for arguments in [["add", "--help"], ["add", "n", "-h"], ["add", "-fh"], ["-q", "add", "--help", "x"]] {
            guard case .help(let text) = try Fixtures.parse(arguments) else {
                Issue.record("no help for \(arguments)")
                continue
            }
            #expect(text.hasPrefix("OVERVIEW: Add a host profile."), "\(arguments)")
            #expect(text.contains("USAGE: herdr-remote add "), "\(arguments)")
        }
        guard case .help(let nested) = try Fixtures.parse(["pins", "forget", "--help"]) else {
            Issue.record("no help")
            return
        }
        #expect(nested.contains("USAGE: herdr-remote pins forget <host>"))
    }

    @Test func helpWinsOverAUsageErrorOnTheSameLine() throws {
        guard case .help(let text) = try Fixtures.parse(["add", "--prot", "22", "--help"]) else {
            Issue.record("expected help")
            return
        }
        #expect(text.hasPrefix("OVERVIEW: Add a host profile."))
        // Too many words for a command that takes some: which one is extra is for its help to show.
        guard case .help(let many) = try Fixtures.parse(["add", "a", "b", "c", "d", "--help"]) else {
            Issue.record("expected help")
            return
        }
        #expect(many.hasPrefix("OVERVIEW: Add a host profile."))
        // A mistake before an unknown word stops the parser there: the word was never judged.
        guard case .help(let root) = try Fixtures.parse(["--bogus", "ad", "-h"]) else {
            Issue.record("expected help")
            return
        }
        #expect(root.hasPrefix("OVERVIEW: Reach a live terminal session from anywhere."))
    }

    /// `herdr-remote agents --help` printed the general help and succeeded, so a typo looked like a
    /// real command: a word that names nothing is refused as it is alone, whatever is beside it.
    @Test func aWordThatNamesNothingIsRefusedEvenBesideHelp() throws {
        let root = "error: unknown subcommand 'ad'; did you mean 'add'? See 'herdr-remote --help'."
        for arguments in [
            ["ad"], ["ad", "--help"], ["ad", "-h"], ["ad", "n", "h", "--help"], ["--help", "ad"], ["-q", "ad", "-h"],
            ["-qh", "ad"], ["ad", "--prot", "--help"],
        ] {
            let error = try #require(Fixtures.usageError(arguments), "\(arguments)")
            #expect(error.kind == .unknownSubcommand, "\(arguments)")
            #expect(error.message == root, "\(arguments)")
        }
        let far = try #require(Fixtures.usageError(["frobnicate", "--help"]))
        #expect(far.message == "error: unknown subcommand 'frobnicate'. See 'herdr-remote --help'.")
        let nested = try #require(Fixtures.usageError(["pins", "lsit", "--help"]))
        #expect(
            nested.message == "error: unknown subcommand 'lsit'; did you mean 'list'? See 'herdr-remote pins --help'.")
        // A command that takes no words: one given to it names nothing either.
        for arguments in [["login", "extra"], ["login", "extra", "--help"], ["pins", "list", "-h", "x"]] {
            let error = try #require(Fixtures.usageError(arguments), "\(arguments)")
            #expect(error.kind == .extraArgument, "\(arguments)")
            #expect(error.problem.hasPrefix("unexpected argument '"), "\(arguments)")
        }
        let leaf = try #require(Fixtures.usageError(["login", "extra", "--help"]))
        #expect(leaf.message == "error: unexpected argument 'extra'. See 'herdr-remote login --help'.")
        // After `--` it is a word again, and `--help` one too.
        let afterDashes = try #require(Fixtures.usageError(["login", "--token", "t", "--", "--help"]))
        #expect(afterDashes.message == "error: unexpected argument '--help'. See 'herdr-remote login --help'.")
    }

    @Test func versionOnTheRootOnly() throws {
        guard case .version(let line) = try Fixtures.parse(["--version"]) else {
            Issue.record("expected version")
            return
        }
        #expect(line == "herdr-remote 1.2.3")
        let error = try #require(Fixtures.usageError(["add", "--version"]))
        #expect(error.kind == .unknownOption)
    }

    // MARK: Spec validation

    @Test func validSpecHasNoProblems() {
        #expect(Fixtures.tool.validationProblems() == [])
    }

    @Test func brokenSpecsAreReported() {
        let broken = CommandSpec(
            name: "tool", abstract: "",
            arguments: [
                PositionalSpec("rest", help: "", isRepeating: true),
                PositionalSpec("late", help: "", isRequired: false),
                PositionalSpec("required", help: ""),
            ],
            options: [OptionSpec("help", help: ""), OptionSpec("port", short: "h", help: "")],
            flags: [FlagSpec("port", help: ""), FlagSpec("bad name", help: "")],
            subcommands: [
                CommandSpec(name: "sub", abstract: "", options: [OptionSpec("port", help: "")]),
                CommandSpec(name: "sub", abstract: "", handler: { _ in .success }),
            ])
        let problems = broken.validationProblems()
        let expected = [
            "tool: 'help' is reserved",
            "tool: short name '-h' is used twice",
            "tool: 'port' is declared twice on this path",
            "tool: 'bad name' is not a valid name",
            "tool: required argument 'required' follows an optional one",
            "tool: only the last argument may repeat ('rest' does)",
            "tool: a command with subcommands cannot take positional arguments",
            "tool: subcommand 'sub' is declared twice",
            "tool sub: 'port' is declared twice on this path",
            "tool sub: a leaf command needs a handler",
        ]
        for problem in expected { #expect(problems.contains(problem), "missing: \(problem)\n\(problems)") }
    }
}
