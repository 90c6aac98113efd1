/// Why a ``TerminalPrompt`` could not read an answer.
public struct PromptError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The line was longer than ``TerminalPrompt/maximumLineLength`` bytes.
        case lineTooLong
        /// The line was not valid UTF-8.
        case invalidEncoding
        /// Reading, writing or changing the terminal failed.
        case inputOutput
    }

    public let kind: Kind
    private let detail: String

    init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    init(_ error: SystemError) {
        self.init(.inputOutput, error.description)
    }

    public var description: String { detail }
}
