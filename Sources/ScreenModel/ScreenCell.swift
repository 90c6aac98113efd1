/// One cell of the screen: the character shown there (a base and its combining marks), its width,
/// and its style.
public struct ScreenCell: Hashable, Sendable {
    /// What the cell shows: one grapheme, or "" for an empty cell and for the right half of a
    /// wide character.
    public var text: String
    /// 1, 2 for a wide character (CJK, most emoji) whose right half is the next cell, 0 for that
    /// right half.
    public var width: UInt8
    public var style: CellStyle

    public init(text: String, width: UInt8 = 1, style: CellStyle = .plain) {
        self.text = text
        self.width = width
        self.style = style
    }

    /// An empty cell of a cleared screen.
    public static let blank = ScreenCell(text: "")
}
