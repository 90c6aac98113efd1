import CLISupport
import Glibc
import Synchronization
import Testing

/// Collects what a program would print.
final class Capture: Sendable {
    private let text = Mutex("")
    var value: String { text.withLock { $0 } }
    var output: CommandLineTool.Output { { line in self.text.withLock { $0 += line } } }
}

struct Unreachable: Error, ExitCodeConvertible, CustomStringConvertible {
    var exitCode: ExitCode { ExitCode(12, meaning: "The host was unreachable.") }
    var description: String { "the host did not answer" }
}

struct Plain: Error, CustomStringConvertible {
    var description: String { "something broke" }
}

@Suite struct CommandLineToolTests {
    /// A program whose handlers record which one ran and with what.
    private func program(_ ran: Capture) -> CommandSpec {
        let connect = CommandSpec(
            name: "connect", abstract: "Connect.",
            arguments: [PositionalSpec("host", help: "Host.")],
            options: [OptionSpec("port", help: "Port.", defaultValue: "22")],
            handler: { arguments in
                let port = try arguments.int("port", range: 1...65535) ?? 0
                ran.output("connect \(arguments.positional("host") ?? "") \(port)")
                switch arguments.positional("host") {
                case "down": throw Unreachable()
                case "broken": throw Plain()
                case "invalid": throw arguments.usageError("'invalid' is not a host name")
                default: return .success
                }
            })
        let list = CommandSpec(
            name: "list", abstract: "List.",
            handler: { _ in
                ran.output("list")
                return ExitCode(3, meaning: "Nothing to list.")
            })
        return CommandSpec(name: "tool", abstract: "A tool.", version: "9", subcommands: [connect, list])
    }

    private func run(_ arguments: [String]) async -> (code: ExitCode, out: String, err: String, ran: String) {
        let (out, err, ran) = (Capture(), Capture(), Capture())
        let code = await CommandLineTool.run(
            program(ran), arguments: arguments, standardOutput: out.output, standardError: err.output)
        return (code, out.value, err.value, ran.value)
    }

    @Test func dispatchesToTheSelectedSubcommand() async {
        let connect = await run(["connect", "box", "--port", "2200"])
        #expect(connect.code == .success)
        #expect(connect.ran == "connect box 2200")
        #expect(connect.out.isEmpty && connect.err.isEmpty)
        let list = await run(["list"])
        #expect(list.code.rawValue == 3)
        #expect(list.ran == "list")
    }

    @Test func usageErrorGoesToStderrWithExit64AndNothingRuns() async {
        let result = await run(["conect", "box"])
        #expect(result.code == .usage)
        #expect(result.code.rawValue == 64)
        #expect(result.err == "error: unknown subcommand 'conect'; did you mean 'connect'? See 'tool --help'.\n")
        #expect(result.out.isEmpty)
        #expect(result.ran.isEmpty)
    }

    /// An unknown subcommand beside --help is the same usage error as alone: no help, exit 64.
    @Test func anUnknownSubcommandWithHelpIsStillAUsageError() async {
        for arguments in [["conect", "--help"], ["conect", "box", "-h"], ["--help", "conect"]] {
            let result = await run(arguments)
            #expect(result.code == .usage, "\(arguments)")
            #expect(
                result.err == "error: unknown subcommand 'conect'; did you mean 'connect'? See 'tool --help'.\n",
                "\(arguments)")
            #expect(result.out.isEmpty && result.ran.isEmpty, "\(arguments)")
        }
        let leaf = await run(["list", "all", "--help"])
        #expect(leaf.code == .usage)
        #expect(leaf.err == "error: unexpected argument 'all'. See 'tool list --help'.\n")
    }

    @Test func validationInsideTheHandlerIsAUsageError() async {
        let range = await run(["connect", "box", "--port", "0"])
        #expect(range.code == .usage)
        #expect(
            range.err == "error: option '--port' must be an integer in 1...65535, got '0'. See 'tool connect --help'.\n"
        )
        let custom = await run(["connect", "invalid"])
        #expect(custom.code == .usage)
        #expect(custom.err == "error: 'invalid' is not a host name. See 'tool connect --help'.\n")
    }

    @Test func handlerErrorsMapToExitCodes() async {
        let down = await run(["connect", "down"])
        #expect(down.code.rawValue == 12)
        #expect(down.err == "error: the host did not answer\n")
        let broken = await run(["connect", "broken"])
        #expect(broken.code == .failure)
        #expect(broken.err == "error: something broke\n")
    }

    @Test func helpAndVersionGoToStdoutWithExit0() async {
        let help = await run(["connect", "--help"])
        #expect(help.code == .success)
        #expect(help.out.hasPrefix("OVERVIEW: Connect.\n"))
        #expect(help.err.isEmpty && help.ran.isEmpty)
        let version = await run(["--version"])
        #expect(version.code == .success)
        #expect(version.out == "tool 9\n")
    }
}

@Suite struct ExitCodeTests {
    @Test func sysexitsValues() {
        let values: [(ExitCode, Int32)] = [
            (.success, 0), (.failure, 1), (.usage, 64), (.dataError, 65), (.noInput, 66), (.unavailable, 69),
            (.software, 70), (.ioError, 74), (.tempFailure, 75), (.noPermission, 77), (.config, 78),
            (.hangup, 129), (.interrupted, 130), (.terminated, 143),
        ]
        for (code, raw) in values { #expect(code.rawValue == raw) }
        #expect(Set(ExitCode.standard.map(\.rawValue)).count == ExitCode.standard.count)
    }

    @Test func equalityIsByValueAndMeaningIsLookedUp() {
        #expect(ExitCode(rawValue: 64) == .usage)
        #expect(ExitCode(rawValue: 64).meaning == ExitCode.usage.meaning)
        #expect(ExitCode(rawValue: 42).meaning == "Exit status 42.")
        #expect(ExitCode(64, meaning: "other words") == .usage)
        #expect(ExitCode.signal(SIGTERM) == .terminated)
        #expect(ExitCode.usage.description == "64 (Usage error: the command line was wrong.)")
    }
}
