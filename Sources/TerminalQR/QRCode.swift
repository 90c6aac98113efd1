import CQREncode

/// A QR code symbol made by libqrencode: a square of dark and light modules.
public struct QRCode: Sendable, Equatable {
    /// The error correction level. M (15 %) keeps a pairing URL (about 250 bytes) at version 10 or so,
    /// which fits an 80-column terminal in half blocks; L makes it smaller still.
    public enum Level: Sendable {
        case low
        case medium
        case quartile
        case high

        var c: QRecLevel {
            switch self {
            case .low: QR_ECLEVEL_L
            case .medium: QR_ECLEVEL_M
            case .quartile: QR_ECLEVEL_Q
            case .high: QR_ECLEVEL_H
            }
        }
    }

    /// Modules per side.
    public let size: Int
    /// Row-major, true for dark.
    public let modules: [Bool]

    /// Encodes `text` as UTF-8 in byte mode at the smallest version that holds it.
    ///
    /// - Throws: ``QRCodeError`` when the text does not fit any version at this level.
    public init(encoding text: String, level: Level = .medium) throws(QRCodeError) {
        let bytes = Array(text.utf8)
        let symbol = bytes.withUnsafeBufferPointer { QRcode_encodeData(Int32($0.count), $0.baseAddress, 0, level.c) }
        guard let symbol else {
            throw QRCodeError(byteCount: bytes.count)
        }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        size = width
        // Bit 0 of each byte is the module's colour (1 = dark); the other bits describe its role.
        modules = (0..<(width * width)).map { symbol.pointee.data[$0] & 1 == 1 }
    }

    /// Whether the module at `row`, `column` is dark; outside the symbol (the quiet zone) it is light.
    public func isDark(row: Int, column: Int) -> Bool {
        guard (0..<size).contains(row), (0..<size).contains(column) else { return false }
        return modules[row * size + column]
    }

    /// The symbol as text, two module rows per line with the half blocks `▀ ▄ █` and spaces, with a
    /// quiet zone of `quietZone` light modules on every side.
    ///
    /// Light modules are drawn (the glyph's foreground) and dark ones left blank, which is right on a
    /// terminal with light text on a dark background, the usual kind. With `colors` the lines force that
    /// (bright white on black, ANSI), so light-background terminals show a scannable code too.
    public func halfBlockLines(quietZone: Int = 4, colors: Bool = false) -> [String] {
        let total = size + 2 * quietZone
        var lines: [String] = []
        var row = 0
        while row < total {
            var line = colors ? "\u{1B}[97;40m" : ""
            for column in 0..<total {
                let top = !isDark(row: row - quietZone, column: column - quietZone)
                // Past the last row (an odd total) the quiet zone simply continues.
                let bottom = row + 1 < total ? !isDark(row: row + 1 - quietZone, column: column - quietZone) : true
                switch (top, bottom) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(colors ? line + "\u{1B}[0m" : line)
            row += 2
        }
        return lines
    }
}

/// Text too long for any QR code version at the level asked for.
public struct QRCodeError: Error, Hashable, Sendable, CustomStringConvertible {
    public let byteCount: Int
    public var description: String { "The text (\(byteCount) bytes) does not fit in a QR code at this level" }
}
