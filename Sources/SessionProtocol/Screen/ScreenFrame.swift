import ScreenModel

/// One complete screen state as a device draws it: the screen, its number, the input bytes the
/// program had had time to echo (what confirms a predicted echo), and whether the bell rang
/// since the state before.
public struct ScreenFrame: Hashable, Sendable {
    public var screen: TerminalScreen
    public var state: UInt64
    public var inputBytes: UInt64
    public var rang: Bool

    public init(screen: TerminalScreen, state: UInt64, inputBytes: UInt64, rang: Bool) {
        self.screen = screen
        self.state = state
        self.inputBytes = inputBytes
        self.rang = rang
    }
}
