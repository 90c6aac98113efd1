import CLISupport
import Foundation
import TestSupport
import Testing

/// `--generate-completion-script SHELL` and `--generate-manual`, and what the spec check says about
/// completion sources.
@Suite struct GeneratedDocumentTests {
    private func run(_ arguments: [String], spec: CommandSpec = CompletionFixtures.tool) async -> (
        code: ExitCode, out: String, err: String
    ) {
        let (out, err) = (Capture(), Capture())
        let code = await CommandLineTool.run(
            spec, arguments: arguments, standardOutput: out.output, standardError: err.output)
        return (code, out.value, err.value)
    }

    @Test func eachShellsScriptIsPrinted() async {
        for shell in CompletionShell.allCases {
            let result = await run(["--generate-completion-script", shell.rawValue])
            #expect(result.code == .success)
            #expect(result.out == shell.script(for: CompletionFixtures.tool))
            #expect(result.err.isEmpty)
        }
        #expect(await run(["--generate-completion-script=zsh"]).out.hasPrefix("#compdef tool\n"))
        #expect(await run(["--generate-completion-script", "bash"]).out.contains("complete -F _tool 'tool'"))
    }

    @Test func theManualIsPrinted() async {
        let result = await run(["--generate-manual"])
        #expect(result.code == .success)
        #expect(result.out == ManPage.render(CompletionFixtures.tool))
        // A program without subcommands answers too (herdr-pair is one).
        let single = CommandSpec(name: "single", abstract: "One thing.", handler: { _ in .failure })
        #expect(await run(["--generate-manual"], spec: single).out.contains(".TH \"SINGLE\" 1"))
    }

    @Test func anUnknownOrMissingShellIsAUsageError() async {
        let unknown = await run(["--generate-completion-script", "tcsh"])
        #expect(unknown.code == .usage)
        #expect(unknown.out.isEmpty)
        #expect(unknown.err.contains("'tcsh'") && unknown.err.contains("bash, zsh, fish"))
        let missing = await run(["--generate-completion-script"])
        #expect(missing.code == .usage)
        #expect(missing.err.contains("missing value"))
    }

    @Test func onlyAsTheRootsOnlyArguments() async {
        #expect(await run(["--generate-manual", "extra"]).code == .usage)
        #expect(await run(["connect", "--generate-manual"]).err.contains("unknown option '--generate-manual'"))
        #expect(await run(["--generate-completion-script", "bash", "x"]).code == .usage)
    }

    @Test func helpDoesNotShowThem() async {
        let help = await run(["--help"])
        #expect(help.code == .success)
        #expect(!help.out.contains("generate"))
    }

    // MARK: The spec check

    private func problems(option completion: CompletionSource) -> [String] {
        let list = CommandSpec(
            name: "list", abstract: "List.", flags: [FlagSpec("names", help: "Names.")], handler: { _ in .success })
        let group = CommandSpec(name: "group", abstract: "Group.", subcommands: [list])
        let show = CommandSpec(
            name: "show", abstract: "Show.", options: [OptionSpec("what", help: "What.", completion: completion)],
            handler: { _ in .success })
        return CommandSpec(name: "tool", abstract: "Tool.", subcommands: [list, group, show]).validationProblems()
    }

    @Test func soundSourcesPass() {
        #expect(CompletionFixtures.tool.validationProblems() == [])
        #expect(problems(option: .values(["a", "b-c", "./x", "k=v"])) == [])
        #expect(problems(option: .command(["list", "--names"])) == [])
        #expect(problems(option: .command(["group", "list"])) == [])
    }

    @Test func wrongValuesAreReported() {
        #expect(problems(option: .values([])) == ["tool show: option '--what': completion values are empty"])
        #expect(
            problems(option: .values(["a b"])) == [
                "tool show: option '--what': completion value 'a b' is not a plain word"
            ])
        #expect(problems(option: .values(["=x"])).count == 1)
        #expect(problems(option: .values(["$(reboot)"])).count == 1)
        #expect(
            problems(option: .values(["a", "a"])) == ["tool show: option '--what': a completion value is listed twice"])
    }

    @Test func aCompletionCommandMustRunACommandOfTheProgram() {
        #expect(problems(option: .command([])) == ["tool show: option '--what': completion command has no arguments"])
        let unknown = problems(option: .command(["lsit"]))
        #expect(unknown.count == 1 && unknown[0].contains("is not a command line of tool"), "\(unknown)")
        #expect(problems(option: .command(["list", "--nmaes"])).count == 1)
        // A group alone runs nothing (a usage error), nor does asking for help.
        #expect(problems(option: .command(["group"])).count == 1)
        #expect(
            problems(option: .command(["list", "--help"])) == [
                "tool show: option '--what': completion command 'list --help' runs nothing"
            ])
    }

    @Test func theSwitchesAreReservedOnTheRoot() {
        let spec = CommandSpec(
            name: "tool", abstract: "Tool.", flags: [FlagSpec("generate-manual", help: "Mine.")],
            handler: { _ in .success })
        #expect(spec.validationProblems() == ["tool: 'generate-manual' is reserved"])
        let below = CommandSpec(
            name: "tool", abstract: "Tool.",
            subcommands: [
                CommandSpec(
                    name: "sub", abstract: "Sub.", flags: [FlagSpec("generate-manual", help: "Fine here.")],
                    handler: { _ in .success })
            ])
        #expect(below.validationProblems() == [])
    }
}
