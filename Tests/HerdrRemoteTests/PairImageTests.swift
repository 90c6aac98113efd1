import Foundation
import TestSupport
import Testing

/// `pair --image`: PNG pictures of QR codes, decoded with libpng and zbar. The codes here are
/// expired on purpose: exit 21 proves the picture was decoded and the code reached the parser,
/// without a computer to pair with.
@Suite("herdr-remote pair --image")
struct PairImageTests {
    /// A well-formed code that expired a minute ago.
    static let expiredCode =
        "herdr://pair?v=1&id=AQIDBAUGBwgJCgsMDQ4PEA&n=studio&u=alice&os=unix&h=100.64.0.1&p=22"
        + "&fp=SHA256:ypeBEsobvcr6wjGzmiPcTaeG7/gUfE5yuYB3ha/uSLs&k=BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc"
        + "&x=\(Int(Date().timeIntervalSince1970) - 60)"

    let cli: CLIHarness
    let pictures: TemporaryDirectory

    init() throws {
        cli = try CLIHarness()
        pictures = try TemporaryDirectory(prefix: "herdr-qr-")
    }

    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let file = pictures.file(name)
        try Data(bytes).write(to: file)
        return file.path
    }

    @Test("a PNG from qrencode -o decodes to the code")
    func qrencodePNG() throws {
        let file = pictures.file("code.png").path
        try ProcessRunner.run("qrencode", ["-o", file, Self.expiredCode], timeout: 10, check: true)
        let result = try cli.run(["pair", "--image", file, "--yes"])
        #expect(result.status == 21, "\(result.stderr)")
        #expect(result.stderr.contains("The pairing code has expired"))
    }

    @Test("a gray PNG and an RGBA PNG with a transparent background decode alike")
    func grayAndTransparent() throws {
        let modules = try PairPicture.modules(of: Self.expiredCode)
        for (name, transparent) in [("gray.png", false), ("rgba.png", true)] {
            let path = try write(PairPicture.png(codes: [modules], transparent: transparent), name)
            let result = try cli.run(["pair", "--image", path, "--yes"])
            #expect(result.status == 21, "\(name): \(result.stderr)")
        }
    }

    @Test("exactly one herdr code: two different ones are refused; the same one twice, or beside another QR, is fine")
    func howManyCodes() throws {
        let code = try PairPicture.modules(of: Self.expiredCode)
        let other = try PairPicture.modules(of: Self.expiredCode.replacingOccurrences(of: "n=studio", with: "n=laptop"))
        let hello = try PairPicture.modules(of: "hello")

        let two = try cli.run([
            "pair", "--image", try write(PairPicture.png(codes: [code, other]), "two.png"), "--yes",
        ])
        #expect(two.status == 20)
        #expect(two.stderr.contains("shows 2 different herdr pairing codes"), "\(two.stderr)")

        let same = try cli.run([
            "pair", "--image", try write(PairPicture.png(codes: [code, code]), "same.png"), "--yes",
        ])
        #expect(same.status == 21, "\(same.stderr)")

        let beside = try cli.run([
            "pair", "--image", try write(PairPicture.png(codes: [hello, code]), "beside.png"), "--yes",
        ])
        #expect(beside.status == 21, "\(beside.stderr)")
    }

    @Test("no QR code, or one that is not a herdr code, is a clear error")
    func noHerdrCode() throws {
        let blank = try cli.run([
            "pair", "--image", try write(PairPicture.png(codes: [], blankWidth: 200), "blank.png"), "--yes",
        ])
        #expect(blank.status == 20)
        #expect(blank.stderr.contains("No QR code found in"))

        let hello = try cli.run([
            "pair", "--image", try write(PairPicture.png(codes: [try PairPicture.modules(of: "hello")]), "hello.png"),
        ])
        #expect(hello.status == 20)
        #expect(hello.stderr.contains("is not a herdr pairing code (it reads \"hello\")"))

        // What a hostile QR says is shown without its control characters.
        let hostile = try cli.run([
            "pair", "--image",
            try write(PairPicture.png(codes: [try PairPicture.modules(of: "\u{1B}[2Jgotcha\u{202E}")]), "hostile.png"),
        ])
        #expect(hostile.status == 20)
        #expect(hostile.stderr.contains("it reads \"[2Jgotcha\""), "\(hostile.stderr)")
        #expect(!hostile.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E })
    }

    @Test("files that are not PNG pictures")
    func notPictures() throws {
        let text = try cli.run(["pair", "--image", try write(Array("herdr://pair?v=1".utf8), "code.txt")])
        #expect(text.status == 20)
        #expect(text.stderr.contains("is not a PNG picture"))

        let whole = PairPicture.png(codes: [try PairPicture.modules(of: Self.expiredCode)])
        let truncated = try cli.run(["pair", "--image", try write(Array(whole.prefix(60)), "cut.png")])
        #expect(truncated.status == 20, "\(truncated.stderr)")
        #expect(truncated.stderr.contains("could not be decoded") || truncated.stderr.contains("not a readable PNG"))

        var corrupt = whole
        corrupt[30] ^= 0xFF  // inside IHDR: its CRC no longer matches
        let damaged = try cli.run(["pair", "--image", try write(corrupt, "damaged.png")])
        #expect(damaged.status == 20, "\(damaged.stderr)")

        let missing = try cli.run(["pair", "--image", pictures.file("missing.png").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("No such file or directory"))

        let directory = try cli.run(["pair", "--image", pictures.path])
        #expect(directory.status == 66)
    }
}
