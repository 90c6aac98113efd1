import Testing

@testable import HerdrKit

/// readconf.c's line splitting, case by case (the resolver's differential tests run the same
/// rules against `ssh -G`).
@Suite struct SSHConfigLineTests {
    struct Split: Sendable, CustomTestStringConvertible {
        let line: String
        let keyword: String
        let arguments: [String]
        var testDescription: String { line.debugDescription }
    }

    static let splits: [Split] = [
        Split(line: "Host foo", keyword: "host", arguments: ["foo"]),
        Split(line: "  HostName\th.example", keyword: "hostname", arguments: ["h.example"]),
        Split(line: "Port=22", keyword: "port", arguments: ["22"]),
        Split(line: "Port = 22", keyword: "port", arguments: ["22"]),
        Split(line: "Port =22", keyword: "port", arguments: ["22"]),
        Split(line: "=Port 22", keyword: "port", arguments: ["22"]),
        Split(line: "User = = x", keyword: "user", arguments: ["=", "x"]),
        Split(line: "HOSTNAME X", keyword: "hostname", arguments: ["X"]),
        Split(line: "\"User\" q", keyword: "user", arguments: ["q"]),
        Split(line: "Us\"er\" q", keyword: "user", arguments: ["q"]),
        Split(line: "IdentityFile \"/a b/c\"", keyword: "identityfile", arguments: ["/a b/c"]),
        Split(line: "User a'b c'd", keyword: "user", arguments: ["ab cd"]),
        Split(line: "User 'it\"s'", keyword: "user", arguments: ["it\"s"]),
        Split(line: "User a\\ b", keyword: "user", arguments: ["a b"]),
        Split(line: "User \"a\\ b\"", keyword: "user", arguments: ["a\\ b"]),
        Split(line: "User a\\\"b", keyword: "user", arguments: ["a\"b"]),
        Split(line: "User a\\x", keyword: "user", arguments: ["a\\x"]),
        Split(line: "User a\\", keyword: "user", arguments: ["a\\"]),
        Split(line: "Host a b  c", keyword: "host", arguments: ["a", "b", "c"]),
        Split(line: "Host foo # note", keyword: "host", arguments: ["foo"]),
        Split(line: "Host foo#1", keyword: "host", arguments: ["foo#1"]),
        Split(line: "Host \"#x\"", keyword: "host", arguments: ["#x"]),
        Split(line: "Host #only", keyword: "host", arguments: []),
        Split(line: "User crlf\r", keyword: "user", arguments: ["crlf"]),
        Split(line: "User x \u{0C} \t", keyword: "user", arguments: ["x"]),
        Split(line: "User a\rb", keyword: "user", arguments: ["a\rb"]),
        Split(line: "User ab\u{0}cd", keyword: "user", arguments: ["ab"]),
        Split(line: "Host \"\"", keyword: "host", arguments: [""]),
    ]

    @Test(arguments: splits)
    func splitsAsReadconfDoes(_ split: Split) throws {
        let line = try #require(try SSHConfigLine.parse(Array(split.line.utf8)[...]))
        #expect(String(decoding: line.keyword, as: UTF8.self) == split.keyword)
        #expect(line.arguments.map { String(decoding: $0, as: UTF8.self) } == split.arguments)
    }

    @Test(arguments: ["", " ", "\t", "# comment", "   # indented", "\r", "\u{0}Host foo", "==Host x", "\"Host foo"])
    func isNoDirective(_ text: String) throws {
        #expect(try SSHConfigLine.parse(Array(text.utf8)[...]) == nil)
    }

    @Test func commandKeywordsKeepTheirTextUnsplit() throws {
        let line = try #require(try SSHConfigLine.parse(Array("ProxyCommand=  \"nc\" %h %p # via nc  ".utf8)[...]))
        #expect(String(decoding: line.commandText, as: UTF8.self) == "\"nc\" %h %p # via nc")
        #expect(line.arguments.map { String(decoding: $0, as: UTF8.self) } == ["nc", "%h", "%p"])
    }

    @Test(arguments: ["Host", "HostName   ", "Port=", "User \t", "Bogus"])
    func aKeywordWithoutValueIsRefused(_ text: String) {
        #expect(throws: SSHConfigLine.Failure.self) { try SSHConfigLine.parse(Array(text.utf8)[...]) }
    }

    @Test(arguments: ["HostName \"a b", "User a\"b", "User 'x", "Host ok \"unclosed # not a comment"])
    func anUnclosedQuoteIsRefused(_ text: String) {
        #expect {
            try SSHConfigLine.parse(Array(text.utf8)[...])
        } throws: { error in
            if case .unterminatedQuote = error as? SSHConfigLine.Failure { return true }
            return false
        }
    }

    @Test func aQuoteAfterACommentIsNoError() throws {
        let line = try #require(try SSHConfigLine.parse(Array("User x # it's fine".utf8)[...]))
        #expect(line.arguments.map { String(decoding: $0, as: UTF8.self) } == ["x"])
    }
}
