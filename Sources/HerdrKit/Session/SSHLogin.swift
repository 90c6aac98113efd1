import HerdrCrypto
import SSHClient

/// What logging in to a saved SSH host takes (where, as whom, with which keys and password),
/// gathered once from the profile, the stores and the options: usable from any thread. One place
/// for it, whether the connection runs a terminal or reads herdr's agents.
struct SSHLogin: Sendable {
    var hostname: String
    var port: Int
    var username: String
    var deviceKey: Ed25519PrivateKey?
    /// The options' key files first, then the profile's own.
    var identityFiles: [String]
    var agentSocketPath: String?
    var password: String?
    var responder: (@Sendable (KeyboardInteractiveChallenge) -> [String]?)?
    var connectTimeout: Duration
    var keepaliveInterval: Int

    init(
        profile: HostProfile, deviceKey: Ed25519PrivateKey?, password: String?, options: TerminalSessionOptions
    ) {
        hostname = CanonicalHost.hostname(profile.hostname)
        port = profile.port
        username = profile.username
        self.deviceKey = deviceKey
        identityFiles = options.identityFiles + profile.identityFiles.filter { !options.identityFiles.contains($0) }
        agentSocketPath = options.agentSocketPath
        self.password = password
        responder = options.promptResponder
        connectTimeout = options.connectTimeout
        keepaliveInterval = options.keepaliveInterval
    }

    /// The connection's configuration: `command` run with `pty` (nil: without a terminal).
    func configuration(policy: HostKeyPolicy, preferred: [String], pty: PTYRequest?, command: String)
        -> SSHConnectionConfiguration
    {
        var configuration = SSHConnectionConfiguration(
            host: hostname, port: port, hostKeyPolicy: policy, preferredHostKeyAlgorithms: preferred,
            credentials: SSHCredentials(
                username: username, privateKey: deviceKey, identityFiles: identityFiles,
                agentSocketPath: agentSocketPath, password: password, responder: responder),
            pty: pty, command: command)
        configuration.connectTimeout = connectTimeout
        configuration.keepaliveInterval = keepaliveInterval
        return configuration
    }
}
