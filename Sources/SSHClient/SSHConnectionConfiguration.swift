import HerdrCrypto

/// Which host keys a connection accepts. The decision is made right after the key exchange,
/// before a single authentication byte is sent.
public enum HostKeyPolicy: Sendable, Equatable {
    /// Complete the key exchange, report the host key, and stop before authenticating.
    /// This is the first phase of trust on first use: no credential reaches an unconfirmed host.
    case probe
    /// Continue only if the presented key blob is one of these; otherwise stop before authenticating.
    case accept(Set<[UInt8]>)
    /// Continue only if the presented key's SHA-256 fingerprint (`SHA256:` and the unpadded
    /// standard base64 of SHA-256(blob), as `ssh-keygen -l -E sha256` prints it) is one of these;
    /// otherwise stop before authenticating. What a pairing code carries.
    case acceptFingerprints(Set<String>)
}

/// What a pseudo-terminal request asks the server for (RFC 4254 §6.2).
public struct PTYRequest: Sendable, Equatable {
    public var term: String
    public var cols: Int
    public var rows: Int
    public var modes: [TerminalMode]

    public init(term: String = "xterm-256color", cols: Int, rows: Int, modes: [TerminalMode] = TerminalMode.defaults) {
        self.term = term
        self.cols = cols
        self.rows = rows
        self.modes = modes
    }
}

/// A keyboard-interactive challenge from the server (RFC 4256).
public struct KeyboardInteractiveChallenge: Sendable, Equatable {
    public struct Prompt: Sendable, Equatable {
        public let text: String
        public let echo: Bool
    }
    public let name: String
    public let instruction: String
    public let prompts: [Prompt]
}

/// Credentials offered to the server, tried in this order: the Ed25519 device key, the key files,
/// the keys in ssh-agent, then a password (method `password`, or `keyboard-interactive` answering
/// its hidden prompts), then the interactive responder for anything else.
public struct SSHCredentials: Sendable {
    public var username: String
    public var privateKey: Ed25519PrivateKey?
    /// Private key files (OpenSSH, PEM or PKCS#8), tried in order after the device key; an
    /// encrypted one's passphrase is asked through `responder` (challenge name `passphrase`).
    public var identityFiles: [String]
    /// The ssh-agent socket (what `SSH_AUTH_SOCK` names) whose keys are tried after the key
    /// files; nil asks no agent.
    public var agentSocketPath: String?
    public var password: String?
    /// Answers keyboard-interactive prompts and, when no password is stored, password requests.
    /// Called on the connection's own thread; it may block until a person answers.
    /// Returning nil gives up on that method.
    public var responder: (@Sendable (KeyboardInteractiveChallenge) -> [String]?)?

    public init(
        username: String, privateKey: Ed25519PrivateKey? = nil, identityFiles: [String] = [],
        agentSocketPath: String? = nil, password: String? = nil,
        responder: (@Sendable (KeyboardInteractiveChallenge) -> [String]?)? = nil
    ) {
        self.username = username
        self.privateKey = privateKey
        self.identityFiles = identityFiles
        self.agentSocketPath = agentSocketPath
        self.password = password
        self.responder = responder
    }
}

/// Everything one SSH connection needs. Defaults suit an interactive terminal.
public struct SSHConnectionConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var hostKeyPolicy: HostKeyPolicy
    /// Host key algorithms to prefer first, e.g. the algorithm of an existing pin.
    public var preferredHostKeyAlgorithms: [String]
    public var credentials: SSHCredentials
    /// Ask for a PTY before running the command; nil runs the command without one.
    public var pty: PTYRequest?
    public var command: String
    /// Called with the numeric peer address after the TCP connection is made and before any SSH
    /// byte is sent. A non-nil answer refuses the peer with that reason.
    public var peerAddressCheck: (@Sendable (String) -> String?)?
    public var connectTimeout: Duration
    /// The whole key exchange and authentication must finish within this time.
    public var handshakeTimeout: Duration
    /// Seconds of quiet before a keepalive request once the session runs (one also follows each
    /// keystroke); the peer is declared lost when one is out and nothing at all arrives for
    /// max(1 s, 4 × the smoothed round trip) (`PathLiveness`).
    public var keepaliveInterval: Int
    /// The SSH receive window offered to the server: the most output that can be in flight.
    public var receiveWindow: Int
    /// The most output handed to the consumer in one chunk.
    public var maximumChunk: Int
    /// When set, output goes to this function on the connection's own thread instead of
    /// `.output` events: no thread handoff, the way a terminal program wants it. It may block
    /// (the host then waits in its SSH window); returning false ends the connection as cancelled.
    public var outputSink: (@Sendable (_ stdout: [UInt8], _ stderr: [UInt8]) -> Bool)?

    public init(
        host: String, port: Int = 22, hostKeyPolicy: HostKeyPolicy, preferredHostKeyAlgorithms: [String] = [],
        credentials: SSHCredentials, pty: PTYRequest?, command: String,
        peerAddressCheck: (@Sendable (String) -> String?)? = nil,
        connectTimeout: Duration = .seconds(10), handshakeTimeout: Duration = .seconds(60),
        keepaliveInterval: Int = 5,
        receiveWindow: Int = 2 * 1024 * 1024, maximumChunk: Int = 1024 * 1024
    ) {
        self.host = host
        self.port = port
        self.hostKeyPolicy = hostKeyPolicy
        self.preferredHostKeyAlgorithms = preferredHostKeyAlgorithms
        self.credentials = credentials
        self.pty = pty
        self.command = command
        self.peerAddressCheck = peerAddressCheck
        self.connectTimeout = connectTimeout
        self.handshakeTimeout = handshakeTimeout
        self.keepaliveInterval = keepaliveInterval
        self.receiveWindow = receiveWindow
        self.maximumChunk = maximumChunk
    }
}
