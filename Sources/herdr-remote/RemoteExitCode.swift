import CLISupport

/// herdr-remote's own exit codes, listed in `--help`, so scripts can tell failures apart.
enum RemoteExitCode {
    static let hostKeyRefused = ExitCode(10, meaning: "The host key was refused: it changed, or it was not trusted.")
    static let authenticationFailed = ExitCode(11, meaning: "Authentication failed: no key or password was accepted.")
    static let unreachable = ExitCode(12, meaning: "The host was unreachable: unknown name, refused, or timed out.")
    static let connectionLost = ExitCode(13, meaning: "The connection dropped and reattaching gave up.")
    static let remoteCommandFailed = ExitCode(14, meaning: "The remote command (herdr) failed or exited at once.")

    static let connectCodes: [ExitCode] = [
        .success, .failure, hostKeyRefused, authenticationFailed, unreachable, connectionLost, remoteCommandFailed,
        .usage, .ioError, .config, .hangup, .terminated,
    ]
}

/// A failure that ends the program with a specific code.
struct RemoteError: Error, ExitCodeConvertible, CustomStringConvertible {
    let exitCode: ExitCode
    let description: String

    init(_ exitCode: ExitCode, _ message: String) {
        self.exitCode = exitCode
        self.description = message
    }
}
