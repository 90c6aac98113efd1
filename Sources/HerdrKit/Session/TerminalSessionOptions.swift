import HerdrAgents
import NoiseRoads
import SSHClient
import SessionProtocol

/// Tuning for a terminal session; the defaults suit an interactive terminal on a tailnet.
public struct TerminalSessionOptions: Sendable {
    /// Seconds of quiet before an SSH keepalive (SSHConnectionConfiguration.keepaliveInterval).
    public var keepaliveInterval: Int = 5
    public var connectTimeout: Duration = .seconds(10)
    public var reconnect = ReconnectPolicy()
    /// A clean exit (status 0) sooner than this after connecting counts as a failure: Windows
    /// reports 0 when herdr is not even installed.
    public var quickExitWindow: Duration = .seconds(2)
    /// Answers password and keyboard-interactive prompts when no stored password fits.
    /// Runs on the connection's own thread and may block until a person answers.
    public var promptResponder: (@Sendable (KeyboardInteractiveChallenge) -> [String]?)?
    /// Key files tried before the profile's own (`connect --identity`).
    public var identityFiles: [String] = []
    /// The ssh-agent socket whose keys are tried after the key files and before a password; a
    /// program sets it from `SSH_AUTH_SOCK`. Nil asks no agent.
    public var agentSocketPath: String?
    /// The SSH receive window: the most output that can be in flight toward this client.
    public var receiveWindow: Int = 2 * 1024 * 1024
    /// The most output handed to `onOutput` in one call.
    public var maximumChunk: Int = 1024 * 1024
    /// Output straight from the connection's own thread instead of `onOutput` on the MainActor:
    /// one thread handoff less per keystroke echo, for a program writing to its own terminal.
    /// It may block (the host then waits in its SSH window); returning false ends the session.
    public var directOutput: (@Sendable ([UInt8]) -> Bool)?
    /// Noise roads: a screen session (docs/companion.md, "Screen sessions"): the computer keeps
    /// the terminal and each complete screen comes here, from the connection's own thread, in
    /// order; false ends the session. Nil: a session of bytes.
    public var screen: (@Sendable (ScreenFrame) -> Bool)?
    /// For a companion host: which roads a connection may take (home network, relay, or both raced).
    public var road: DeviceRoads.Choice = .any
    /// Land in this agent's pane (`connect --agent`) instead of the host's herdr session: the
    /// target is resolved against the computer's agents board first (over SSH read with `herdr
    /// session list --json` and `herdr api snapshot`; a `SESSION/PANE` target is attached as it
    /// is, herdr checking it), then the session runs `herdr agent attach`.
    public var agent: AgentTarget?
    /// Noise roads, with `agent`: every board the connection hears, with its road (`home`,
    /// `relay`); the connection then keeps watching agents while the agent's terminal runs.
    public var onAgents: (@MainActor @Sendable (AgentBoard, String) -> Void)?
    /// Noise roads, with `agent`: how long a connection that is up waits for the computer's
    /// board before taking its herdr-host for one older than the agents family.
    public var agentBoardTimeout: Duration = .seconds(10)

    public init() {}
}
