/// An error that knows which ``ExitCode`` the program should end with when it escapes a handler.
///
/// ``CommandLineTool`` prints the error to stderr and exits with ``exitCode`` instead of the generic
/// ``ExitCode/failure``, so programs can keep one error type per failure and still give scripts
/// distinct exit codes.
public protocol ExitCodeConvertible: Error {
    /// The code to end the program with.
    var exitCode: ExitCode { get }
}
