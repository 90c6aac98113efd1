import CompanionPairing
import Foundation
import Testing

/// docs/companion.md's worked example is what the code makes today: the text between its
/// markers is `WorkedExample`'s, byte for byte. After a change of the protocol, rewrite it with
/// `HERDR_WRITE_WORKED_EXAMPLE=1 swift test --filter WorkedExampleTests`.
@Suite struct WorkedExampleTests {
    static let begin = "<!-- worked example: written by Tests/CompanionTests/WorkedExample.swift -->\n"
    static let end = "<!-- end of the worked example -->\n"

    static var document: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/companion.md")
    }

    @Test func theDocsWorkedExampleIsWhatTheCodeMakes() throws {
        var example = try WorkedExample()
        let generated = try example.markdown()
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let start = try #require(text.range(of: Self.begin), "docs/companion.md has no worked-example marker")
        let stop = try #require(text.range(of: Self.end, range: start.upperBound..<text.endIndex))
        let written = String(text[start.upperBound..<stop.lowerBound])
        if ProcessInfo.processInfo.environment["HERDR_WRITE_WORKED_EXAMPLE"] == "1", written != generated {
            try Data((text[..<start.upperBound] + generated + text[stop.lowerBound...]).utf8).write(
                to: Self.document, options: .atomic)
            return
        }
        let firstDifference = zip(written.split(separator: "\n"), generated.split(separator: "\n")).first { $0 != $1 }
        // Decided apart: the message names the first line that differs, not the whole section twice.
        let same = written == generated
        #expect(
            same,
            "docs/companion.md's worked example is not what the code makes (first difference: \(String(describing: firstDifference))); rewrite it with HERDR_WRITE_WORKED_EXAMPLE=1 swift test --filter WorkedExampleTests"
        )
    }

    /// The example is the code's: the same inputs make the same text, and it is the protocol's
    /// (the code parses, the handshake hash gives the SAS shown).
    @Test func theExampleIsReproducibleAndParses() throws {
        var first = try WorkedExample()
        var second = try WorkedExample()
        #expect(try first.markdown() == second.markdown())
        let code = try first.code()
        #expect(code.url.contains("&relay=https:%2F%2Frelay.example.com&"), "a real code escapes the relay's slashes")
        #expect(try CompanionCode(parsing: code.url, now: first.expiry.addingTimeInterval(-120)) == code)
        // "The code" shows it too, as a real code beside the template.
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        #expect(text.components(separatedBy: code.url + "\n").count == 3, "the code, twice in docs/companion.md")
    }
}
