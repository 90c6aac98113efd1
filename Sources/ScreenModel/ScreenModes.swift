/// The terminal modes a device needs to send the right bytes and draw the right screen.
public struct ScreenModes: Hashable, Sendable {
    /// Which mouse events the program asked for (DECSET 1000, 1002, 1003).
    public enum Mouse: UInt8, Hashable, Sendable {
        case none = 0
        case click, drag, move
    }

    /// DECCKM: the arrow keys send `ESC O A` instead of `ESC [ A`.
    public var applicationCursorKeys = false
    /// DECSET 2004: a paste is sent between `ESC [ 200 ~` and `ESC [ 201 ~`.
    public var bracketedPaste = false
    public var mouse = Mouse.none
    /// DECSET 1049/47/1047: a full-screen program's own screen.
    public var alternateScreen = false
    /// DECSCNM: the whole screen in reverse video.
    public var reverseVideo = false

    public init() {}
}
