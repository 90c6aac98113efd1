/// Why an ssh_config could not be resolved: what ssh itself would stop at (a bad port, an
/// unterminated quote, Includes nested too deep), a limit of ``SSHConfigLimits`` exceeded, or a
/// file that could not be read. Its description names the file and line, so a person can fix it.
public struct SSHConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, stable for programs (the description is for people).
    public enum Kind: String, Hashable, Sendable {
        /// A quote opened and not closed (ssh: "invalid quotes").
        case unterminatedQuote
        /// A keyword with no value (ssh: "no argument after keyword", "Missing argument").
        case missingArgument
        /// More values than the keyword takes (ssh: "extra arguments at end of line").
        case extraArguments
        /// An empty value in a list (`Host ""`, `Include ""`).
        case emptyArgument
        /// A port outside 1...65535 or not a number (ssh: "Bad port").
        case badPort
        /// A `%` token ssh does not know, or a lone `%` at the end.
        case unknownToken
        /// A `%` token ssh knows and herdr-remote does not expand (`%C`, or `%i` without a uid).
        case unsupportedToken
        /// `${NAME}` with no such variable, or unclosed.
        case environmentVariable
        /// `~user/` for a user whose home is not known.
        case unknownUser
        /// Includes nested deeper than ssh allows, usually a file including itself.
        case includeDepth
        /// An Include ssh refuses (`~` in the system-wide file).
        case badIncludePath
        /// A file larger than ``SSHConfigLimits/maxFileBytes``.
        case fileTooLarge
        /// A line longer than ``SSHConfigLimits/maxLineBytes``.
        case lineTooLong
        /// More lines than ``SSHConfigLimits/maxLinesPerFile``.
        case tooManyLines
        /// An Include pattern matching more than ``SSHConfigLimits/maxIncludeMatches`` files.
        case tooManyIncludeMatches
        /// More file reads than ``SSHConfigLimits/maxFilesRead``.
        case tooManyFiles
        /// More bytes than ``SSHConfigLimits/maxTotalBytes`` over all files.
        case tooManyBytes
        /// More IdentityFile values than ssh keeps (100).
        case tooManyIdentityFiles
        /// A HostName or IdentityFile longer than its limit once expanded.
        case valueTooLong
        /// A file that exists and cannot be read.
        case unreadableFile
        /// A file writable by others or owned by someone else, which ssh refuses to read.
        case badPermissions
        /// The one config file asked for (as with `ssh -F`) does not exist.
        case missingFile
        /// An Include pattern the file system could not expand.
        case globFailed
        /// The alias asked for cannot be a Host alias on ssh's command line.
        case invalidAlias
    }

    /// What went wrong.
    public let kind: Kind
    /// The line at fault, when there is one.
    public let location: SSHConfigLocation?
    private let detail: String

    init(_ kind: Kind, _ detail: String, at location: SSHConfigLocation? = nil) {
        self.kind = kind
        self.detail = detail
        self.location = location
    }

    /// `~/.ssh/config line 4: Bad port '0' (ports are 1 to 65535)`.
    public var description: String {
        guard let location else { return detail }
        return "\(location): \(detail)"
    }
}
