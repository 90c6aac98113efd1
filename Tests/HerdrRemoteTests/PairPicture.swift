import Foundation
import TestSupport

/// QR pictures for `pair --image` tests: `qrencode` draws the code; this writes the PNG itself
/// (gray or RGBA with transparency, one or several codes side by side, or none), so the tests
/// can make pictures qrencode alone cannot.
enum PairPicture {
    /// A code's modules, dark = true, from `qrencode -t ASCII` (each module two characters wide).
    static func modules(of text: String) throws -> [[Bool]] {
        let result = try ProcessRunner.run("qrencode", ["-t", "ASCII", "-m", "0", text], timeout: 10, check: true)
        return result.stdout.split(separator: "\n").map { line in
            stride(from: 0, to: line.count - 1, by: 2).map { line[line.index(line.startIndex, offsetBy: $0)] == "#" }
        }
    }

    /// A picture of `codes` side by side, `scale` pixels per module, a quiet zone of 4 modules
    /// around each. With `transparent`, light pixels are fully transparent RGBA instead of white.
    static func png(codes: [[[Bool]]], scale: Int = 4, transparent: Bool = false, blankWidth: Int = 0) -> [UInt8] {
        let quiet = 4
        let sizes = codes.map { ($0.count + 2 * quiet) * scale }
        let width = max(sizes.reduce(0, +), blankWidth, 1)
        let height = max(sizes.max() ?? 0, blankWidth, 1)
        var dark = [[Bool]](repeating: [Bool](repeating: false, count: width), count: height)
        var left = 0
        for (code, size) in zip(codes, sizes) {
            for (y, row) in code.enumerated() {
                for (x, module) in row.enumerated() where module {
                    for dy in 0..<scale {
                        for dx in 0..<scale {
                            dark[(y + quiet) * scale + dy][left + (x + quiet) * scale + dx] = true
                        }
                    }
                }
            }
            left += size
        }
        var raw: [UInt8] = []
        for row in dark {
            raw.append(0)  // filter: none
            for pixel in row {
                if transparent {
                    raw += pixel ? [0, 0, 0, 255] : [0, 0, 0, 0]
                } else {
                    raw.append(pixel ? 0 : 255)
                }
            }
        }
        var header: [UInt8] = []
        header += bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, transparent ? 6 : 0, 0, 0, 0]  // 8 bits, gray or RGBA, deflate, no filter, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlibStored(raw))
            + chunk("IEND", [])
    }

    // MARK: PNG and zlib by hand (stored deflate blocks: no compression needed)

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(crc32(typeBytes + data))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let size = min(65535, data.count - offset)
            let last: UInt8 = offset + size == data.count ? 1 : 0
            out.append(last)
            out += [UInt8(size & 0xff), UInt8(size >> 8), UInt8(~size & 0xff), UInt8((~size >> 8) & 0xff)]
            out += data[offset..<offset + size]
            offset += size
        } while offset < data.count
        return out + bigEndian(adler32(data))
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }
}
