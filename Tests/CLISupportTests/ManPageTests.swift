import CLISupport
import Foundation
import TestSupport
import Testing

/// The manual page: roff that groff formats without a warning, holding every command and option.
@Suite struct ManPageTests {
    /// `page` formatted by groff as plain text, and what groff warned about (with every warning on).
    static func format(_ page: String) throws -> (text: String, warnings: String) {
        let directory = try TemporaryDirectory(prefix: "man-page-")
        let file = directory.file("page.1")
        try page.write(to: file, atomically: true, encoding: .utf8)
        let groff = try ProcessRunner.which("groff")
        let check = try ProcessRunner.run(groff, ["-man", "-Tutf8", "-ww", "-z", file.path])
        let text = try ProcessRunner.run(groff, ["-man", "-Tutf8", "-P-cbou", file.path], check: true)
        return (text.stdout, check.stderr + (check.status == 0 ? "" : "exit \(check.status)"))
    }

    @Test func everyCommandAndOptionIsOnThePage() throws {
        let (text, warnings) = try Self.format(ManPage.render(CompletionFixtures.tool))
        #expect(warnings.isEmpty, "\(warnings)")
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS"] {
            #expect(text.contains("\n\(section)\n"), "section \(section)")
        }
        #expect(text.contains("tool - A tool\n"))
        for command in ["tool connect", "tool list", "tool copy", "tool pins", "tool pins forget", "tool pins list"] {
            #expect(text.contains("\n   \(command)\n"), "subsection \(command)")
        }
        for option in [
            "--quiet", "--version", "-r, --road road", "-v, --verbose", "--names", "--log file", "--format format",
        ] {
            #expect(text.contains(option), "\(option)")
        }
        #expect(text.contains("Say more. (repeatable)"))
        // The discussion's example is kept as written.
        #expect(text.contains("\n         tool connect alpha\n"))
    }

    @Test func roffSpecialsAreEscaped() throws {
        let spec = CommandSpec(
            name: "odd", abstract: "Odd text.",
            discussion: """
                .TH looks like a request, 'so does this, and C:\\path has a backslash \u{2014} and an em dash.

                  .verbatim line
                """,
            version: "1.0-beta",
            options: [OptionSpec("dash-name", help: "A \"quoted\" -x value.", defaultValue: "-1")],
            handler: { _ in .success })
        let page = ManPage.render(spec)
        #expect(page.contains(#"\-\-dash\-name"#))
        #expect(page.contains(#"C:\epath"#))
        #expect(page.contains(#"\[u2014]"#))
        #expect(page.contains("\n" + #"\&.TH looks"#))
        // A line that starts with a space is text already.
        #expect(page.contains("\n  .verbatim line\n"))
        let (text, warnings) = try Self.format(page)
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(text.contains(".TH looks like a request, 'so does this"))
        #expect(text.contains("C:\\path"))
        #expect(text.contains("\u{2014}"))
        #expect(text.contains("  .verbatim line"))
        #expect(text.contains(#"A "quoted" -x value. (default: -1)"#))
        #expect(text.contains("odd 1.0-beta"))
    }
}
