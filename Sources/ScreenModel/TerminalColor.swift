/// A cell's foreground or background colour as the program chose it: the terminal's default,
/// one of the 256 of the palette (SGR 30–37, 90–97, `38;5;n`), or 24-bit (`38;2;r;g;b`).
public enum TerminalColor: Hashable, Sendable {
    case `default`
    case indexed(UInt8)
    case rgb(red: UInt8, green: UInt8, blue: UInt8)
}
