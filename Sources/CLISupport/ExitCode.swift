/// The status a program of this project ends with.
///
/// Named constants follow `sysexits.h` where one applies, and the shell's `128 + signal` convention
/// for endings caused by a signal. Programs add their own codes (for example herdr-remote's
/// `hostKeyRefused`) with ``init(_:meaning:)``, so `--help` can list every distinct code with its
/// meaning in an EXIT CODES section.
///
/// Two codes are equal when their raw values are equal: the meaning is documentation only.
public struct ExitCode: Sendable, Hashable, CustomStringConvertible {
    /// The value passed to `exit(3)`.
    public let rawValue: Int32
    /// One line telling a person what this code means, shown in help output.
    public let meaning: String

    /// A code with a meaning of its own, for codes a program defines.
    public init(_ rawValue: Int32, meaning: String) {
        self.rawValue = rawValue
        self.meaning = meaning
    }

    /// A code by value; its meaning is the standard one when the value is one of ``standard``.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
        self.meaning = ExitCode.standard.first { $0.rawValue == rawValue }?.meaning ?? "Exit status \(rawValue)."
    }

    /// The code a shell reports for a process ended by `signal` (128 + the signal number).
    public static func signal(_ signal: Int32) -> ExitCode {
        ExitCode(rawValue: 128 + signal)
    }

    public static func == (lhs: ExitCode, rhs: ExitCode) -> Bool { lhs.rawValue == rhs.rawValue }

    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    public var description: String { "\(rawValue) (\(meaning))" }

    /// 0: the program did what was asked.
    public static let success = ExitCode(0, meaning: "Success.")
    /// 1: a failure with no more specific code.
    public static let failure = ExitCode(1, meaning: "Failure.")
    /// 64 (EX_USAGE): the command line was wrong.
    public static let usage = ExitCode(64, meaning: "Usage error: the command line was wrong.")
    /// 65 (EX_DATAERR): input data was malformed.
    public static let dataError = ExitCode(65, meaning: "Input data was malformed.")
    /// 66 (EX_NOINPUT): an input file did not exist or could not be read.
    public static let noInput = ExitCode(66, meaning: "An input file did not exist or could not be read.")
    /// 69 (EX_UNAVAILABLE): a service or peer needed was unavailable.
    public static let unavailable = ExitCode(69, meaning: "A service or peer was unavailable.")
    /// 70 (EX_SOFTWARE): an internal error; a bug.
    public static let software = ExitCode(70, meaning: "Internal software error.")
    /// 74 (EX_IOERR): reading or writing failed.
    public static let ioError = ExitCode(74, meaning: "An input/output error occurred.")
    /// 75 (EX_TEMPFAIL): a temporary failure; trying again later may work.
    public static let tempFailure = ExitCode(75, meaning: "Temporary failure; trying again later may work.")
    /// 77 (EX_NOPERM): permission denied.
    public static let noPermission = ExitCode(77, meaning: "Permission denied.")
    /// 78 (EX_CONFIG): the configuration is wrong.
    public static let config = ExitCode(78, meaning: "Configuration error.")
    /// 129 (128 + SIGHUP): the terminal or controlling process went away.
    public static let hangup = ExitCode(129, meaning: "Hung up (SIGHUP).")
    /// 130 (128 + SIGINT): interrupted.
    public static let interrupted = ExitCode(130, meaning: "Interrupted (SIGINT).")
    /// 143 (128 + SIGTERM): asked to terminate.
    public static let terminated = ExitCode(143, meaning: "Terminated (SIGTERM).")

    /// Every named code above, in increasing order.
    public static let standard: [ExitCode] = [
        .success, .failure, .usage, .dataError, .noInput, .unavailable, .software, .ioError, .tempFailure,
        .noPermission, .config, .hangup, .interrupted, .terminated,
    ]
}
