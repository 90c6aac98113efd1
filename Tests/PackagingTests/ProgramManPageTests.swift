import Foundation
import TestSupport
import Testing

/// Each program's man page: groff formats it without a warning, and it documents every command and
/// option the program's help lists.
@Suite struct ProgramManPageTests {
    @Test(arguments: Programs.names)
    func thePageCoversWhatHelpLists(_ program: String) throws {
        let directory = try TemporaryDirectory(prefix: "program-man-")
        let file = directory.file("\(program).1")
        try Programs.run(program, ["--generate-manual"]).write(to: file, atomically: true, encoding: .utf8)
        let groff = try ProcessRunner.which("groff")
        let check = try ProcessRunner.run(groff, ["-man", "-Tutf8", "-ww", "-z", file.path])
        #expect(check.status == 0 && check.stderr.isEmpty, "\(check.stderr)")
        let text = try ProcessRunner.run(groff, ["-man", "-Tutf8", "-P-cbou", file.path], check: true).stdout
        #expect(text.hasPrefix("\(program.uppercased())(1)"))
        #expect(text.contains("\nNAME\n       \(program) - "))
        let version = try Programs.run(program, ["--version"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text.contains(version), "the footer names \(version)")
        for command in try Programs.commands(of: program) {
            let path = command.path.joined(separator: " ")
            if command.path.count > 1 { #expect(text.contains("\n   \(path)\n"), "section for \(path)") }
            for option in command.options {
                #expect(text.contains(option), "\(path) \(option)")
            }
        }
    }

    /// No help text shows a source line's continuation: a backslash then more words on the same
    /// line (an escaped `\\` where a multi-line literal meant `\`). A shell example's trailing
    /// backslash is fine.
    @Test(arguments: Programs.names)
    func helpHasNoStrayBackslash(_ program: String) throws {
        for command in try Programs.commands(of: program) {
            let help = try Programs.run(program, Array(command.path.dropFirst()) + ["--help"])
            for line in help.split(separator: "\n") {
                #expect(line.firstRange(of: #/\\ +\S/#) == nil, "\(command.path.joined(separator: " ")): \(line)")
            }
        }
    }

    /// man itself reads the page (as `man -l` does once it is installed).
    @Test func manReadsThePage() throws {
        let directory = try TemporaryDirectory(prefix: "program-man-")
        let file = directory.file("herdr-remote.1")
        try Programs.run("herdr-remote", ["--generate-manual"]).write(to: file, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["MANPAGER"] = "cat"
        environment["MANWIDTH"] = "80"
        let result = try ProcessRunner.run(
            ProcessRunner.which("man"), ["-l", file.path], environment: environment, timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("herdr-remote connect"))
        #expect(result.stdout.contains("--accept-new-host-key"))
    }
}
