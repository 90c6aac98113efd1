import Testing

@testable import herdr_remote

@Suite("ssh-style escape sequences")
struct EscapeSequenceTests {
    typealias Action = EscapeSequence.Action
    static let tilde = UInt8(ascii: "~")

    @Test("~. at the start or after a newline disconnects; bytes before it are sent first")
    func disconnect() {
        var escapes = EscapeSequence()
        #expect(escapes.feed(Array("~.".utf8)) == [.disconnect])
        var afterLine = EscapeSequence()
        #expect(afterLine.feed(Array("ls\r~.".utf8)) == [.send(Array("ls\r".utf8)), .disconnect])
    }

    @Test("a tilde in the middle of a line passes through untouched")
    func midLine() {
        var escapes = EscapeSequence()
        #expect(escapes.feed(Array("a~.".utf8)) == [.send(Array("a~.".utf8))])
    }

    @Test("~~ sends one tilde, ~? asks for help, ~x sends both bytes")
    func otherEscapes() {
        var escapes = EscapeSequence()
        #expect(escapes.feed(Array("~~".utf8)) == [.send([Self.tilde])])
        var help = EscapeSequence()
        #expect(help.feed(Array("~?".utf8)) == [.showHelp])
        var other = EscapeSequence()
        #expect(other.feed(Array("~x".utf8)) == [.send(Array("~x".utf8))])
    }

    @Test("the escape works across separate reads")
    func splitAcrossReads() {
        var escapes = EscapeSequence()
        #expect(escapes.feed(Array("echo\r".utf8)) == [.send(Array("echo\r".utf8))])
        #expect(escapes.feed([Self.tilde]) == [])
        #expect(escapes.feed(Array(".".utf8)) == [.disconnect])
    }
}
