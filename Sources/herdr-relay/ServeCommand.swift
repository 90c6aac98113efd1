import CLISupport
import Foundation
import RelayCommandLine

/// `herdr-relay serve`: runs the relay until SIGINT or SIGTERM, then closes every socket with
/// 1001 `server shutting down` and exits 0.
enum ServeCommand {
    static let spec = ServeCommandLine.spec { arguments in
        let settings = try ServeSettings(arguments, environment: ProcessInfo.processInfo.environment)
        return await BlockingCall.run { settings.run() }
    }
}
