import Foundation
import TestSupport
import Testing

@testable import TerminalQR

/// The terminal QR code: libqrencode's symbol in half blocks, read back by zbarimg.
@Suite struct QRCodeTests {
    @Test func theHalfBlockQRCodeDecodesWithZbarimg() throws {
        let url =
            "herdr://pair?v=1&id=AAECAwQFBgcICQoLDA0ODw&n=James%27s%20Mac&u=james&os=unix&h=studio.tail1234.ts.net,100.101.102.103,studio&p=22&fp=SHA256:y%2F9bMRGJa4m6o4N8m4wJt7R7DOvMF7Ar4iQyWagXGpg&k=HyAkYRDI29A0R1GwV5dUvpaQJbsWoju7zVonagwddJw&x=1795986485&s=work"
        let code = try QRCode(encoding: url, level: .medium)
        let lines = code.halfBlockLines(quietZone: 4)
        #expect(lines.count == (code.size + 8 + 1) / 2)
        #expect(lines.allSatisfy { $0.count == code.size + 8 })
        #expect(lines.first == String(repeating: "█", count: code.size + 8))
        #expect(code.size <= 65)  // fits 80 columns with the quiet zone

        // Light modules are the drawn ones: white pixels.
        let directory = try TemporaryDirectory()
        var rows: [[Bool]] = []
        for line in lines {
            rows.append(line.map { $0 == "█" || $0 == "▀" })
            rows.append(line.map { $0 == "█" || $0 == "▄" })
        }
        var pgm = Array("P5 \(rows[0].count * 6) \(rows.count * 6) 255\n".utf8)
        for row in rows {
            let pixels = row.flatMap { [UInt8](repeating: $0 ? 255 : 0, count: 6) }
            for _ in 0..<6 { pgm += pixels }
        }
        try Data(pgm).write(to: directory.file("code.pgm"))
        let decoded = try ProcessRunner.run("zbarimg", ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", directory.file("code.pgm").path])
        #expect(decoded.stdout.trimmingCharacters(in: .newlines) == url)

        let colored = code.halfBlockLines(quietZone: 4, colors: true)
        #expect(colored[0].hasPrefix("\u{1B}[97;40m") && colored[0].hasSuffix("\u{1B}[0m"))
    }

    @Test func textTooLongForAnyVersionIsAnError() {
        #expect(throws: QRCodeError.self) { try QRCode(encoding: String(repeating: "x", count: 4000), level: .high) }
    }

    /// The PNG (stored deflate, written by hand) is one zbarimg reads back to the text.
    @Test func thePNGDecodesWithZbarimg() throws {
        let text = "herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs=AAAA&pid=BBBB&n=studio"
        let code = try QRCode(encoding: text, level: .medium)
        let png = code.png(scale: 6, quietZone: 4)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        let directory = try TemporaryDirectory()
        let file = directory.file("code.png")
        try Data(png).write(to: file)
        let decoded = try ProcessRunner.run("zbarimg", ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", file.path])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdout.trimmingCharacters(in: .newlines) == text)
    }
}
