import Glibc

/// The shell around ``CommandParser``: parse, print help or the usage error, run the selected
/// command's handler, and turn the outcome into an ``ExitCode``.
///
/// ``run(_:arguments:standardOutput:standardError:)`` returns the code and never exits, so tests can
/// drive a whole program; ``main(_:arguments:)`` is what a program's `main.swift` calls:
///
///     // Sources/herdr-remote/main.swift
///     import CLISupport
///     await CommandLineTool.main(HerdrRemote.spec)
public enum CommandLineTool {
    /// Where text goes: stdout or stderr in a program, a buffer in a test.
    public typealias Output = @Sendable (String) -> Void

    /// Runs the program and exits the process with the resulting code.
    ///
    /// Exiting goes through `exit(3)`, so the `atexit` hook of ``RawTerminalMode`` restores any
    /// terminal still in raw mode.
    public static func main(
        _ spec: CommandSpec, arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) async -> Never {
        let code = await run(spec, arguments: arguments)
        exit(code.rawValue)
    }

    /// Parses `arguments`, then prints help or version (exit 0), prints a usage error (exit 64), or
    /// runs the selected command's handler.
    ///
    /// Two requests are answered before parsing, when they are the only arguments:
    /// `--generate-completion-script bash|zsh|fish` prints the shell's completion script
    /// (``CompletionShell``) and `--generate-manual` the manual page (``ManPage``), exit 0; an
    /// unknown shell is a usage error. They are for packaging (`make install`), so help omits them.
    ///
    /// What the handler throws is printed to `standardError` as `error: ...`; the code is 64 for a
    /// ``UsageError``, the error's own for an ``ExitCodeConvertible``, and 1 for anything else.
    public static func run(
        _ spec: CommandSpec, arguments: [String],
        standardOutput: Output = { try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: $0) },
        standardError: Output = { StandardError.write($0) }
    ) async -> ExitCode {
        do {
            if let document = try GeneratedDocument.requested(by: arguments, program: spec.name) {
                standardOutput(document.render(spec))
                return .success
            }
        } catch {
            standardError(error.message + "\n")
            return .usage
        }
        let invocation: Invocation
        do {
            invocation = try CommandParser.parse(arguments, spec: spec)
        } catch {
            standardError(error.message + "\n")
            return .usage
        }
        switch invocation {
        case .help(let text):
            standardOutput(text)
            return .success
        case .version(let line):
            standardOutput(line + "\n")
            return .success
        case .run(let command, let parsed):
            guard let handler = command.handler else { return .software }  // the parser rules this out
            do {
                return try await handler(parsed)
            } catch let error as UsageError {
                standardError(error.message + "\n")
                return .usage
            } catch {
                let text = "\(error)"
                standardError((text.hasPrefix("error:") ? text : "error: \(text)") + "\n")
                return (error as? any ExitCodeConvertible)?.exitCode ?? .failure
            }
        }
    }
}
