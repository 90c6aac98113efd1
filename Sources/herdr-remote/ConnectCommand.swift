import CLISupport
import Foundation
import Glibc
import HerdrAgents
import HerdrKit
import NoiseRoads
import Observation
import RelayClient
import SSHClient

/// `connect NAME`: the live session in this terminal.
enum ConnectCommand {
    static let spec = CommandSpec(
        name: "connect", abstract: "Attach to the host's live herdr (or tmux) session in this terminal.",
        discussion: """
            Type ~. after a newline to disconnect, ~? for help.

            Over SSH, the first connection to a host shows its host key fingerprint and asks before anything \
            is sent; the key is then pinned, and a changed key is refused. Logins are tried in this order: \
            this device's key (herdr-remote key), the --identity files and the host's saved ones, the keys in \
            ssh-agent when SSH_AUTH_SOCK is set (set it empty to skip the agent), then the stored password, or \
            one asked on the terminal. If the connection drops, herdr-remote reattaches to the same session, \
            with backoff.

            A host paired with a herdr://companion code is reached end to end encrypted to herdr-host on the \
            computer (herdr-host run), over two roads tried together: straight to the computer on the home \
            network when it listens there, and through the relay (if it was paired through one) after a short \
            head start. The first \
            handshake with the pinned computer key wins, home preferred; the status line says which. After a \
            drop it reconnects over whichever road answers, and the session resumes where it was without \
            losing or repeating a byte of output, as long as the computer kept it (15 minutes by default, \
            herdr-host config grace-period); when the home network comes back, the session moves back to it.

            With --agent, it lands in one herdr agent's pane instead (herdr agent attach on the computer): \
            TARGET is a pane id (w1:p2), a pane in a named session (work/w1:p2), or an agent's name, which \
            must be unique (herdr-remote agents lists them). It is looked up on the computer's agents board \
            first, on every road (over SSH: herdr session list --json and herdr api snapshot; a SESSION/PANE \
            target is attached as it is, herdr checking it); none or several matching is an error listing \
            the candidates (exit 18). A bare pane id is looked for in the host's session first. Only that \
            pane is attached, so a small terminal here resizes that pane's tab on the computer, not the \
            whole session's other tabs (docs/agents.md, "Pane sizes").

            With --screen (companion hosts), the computer keeps the terminal's screen (herdr-host's \
            libvterm) and sends screens instead of bytes, as mosh does: only the newest screen crosses a slow \
            or busy link, and a reconnect brings back one screen rather than the output missed. This \
            terminal then shows the computer's screen in its alternate screen; its own scrollback holds none \
            of the session. As in mosh, characters typed on a line can be shown before the computer echoes \
            them, underlined until it does, and withdrawn when it does not (a password, a full-screen \
            program): --predict adaptive (the default) shows them when the echo takes over 30 ms, always \
            whenever they are believed, never not at all.
            """,
        arguments: [
            PositionalSpec(
                "name", help: "A saved host (herdr-remote hosts lists them).", completion: HostCommands.savedNames)
        ],
        options: [
            OptionSpec(
                "road", valueName: "home|relay",
                help: "For a companion host: take only this road (default: both, the home network preferred).",
                completion: .values(["home", "relay"])),
            OptionSpec(
                "predict", valueName: "adaptive|always|never",
                help:
                    "With --screen: show typed characters before the computer echoes them (adaptive: when the echo takes over 30 ms).",
                completion: .values(["adaptive", "always", "never"])),
            OptionSpec(
                "agent", valueName: "target",
                help:
                    "Land in this herdr agent's pane: a pane id (w1:p2), SESSION/PANE, or a unique agent name."),
            HostCommands.identityOption,
        ],
        flags: [
            FlagSpec("no-reattach", help: "Fail at once when the connection drops instead of reattaching."),
            FlagSpec(
                "screen",
                help: "For a companion host: get screens instead of bytes (the computer keeps the terminal, as mosh)."),
            FlagSpec(
                "accept-new-host-key", help: "Pin a new host's key without asking (a changed key is still refused)."),
        ],
        exitCodes: RemoteExitCode.connectCodes,
        handler: { @MainActor arguments in
            try await run(arguments)
        })

    @MainActor
    static func run(_ arguments: ParsedArguments) async throws -> ExitCode {
        let store = try HostCommands.openStore()
        let host = try HostCommands.findHost(arguments.positional("name") ?? "", in: store)
        var options = TerminalSessionOptions()
        if arguments.flag("no-reattach") { options.reconnect = .never }
        if let road = arguments.string("road") {
            guard let choice = DeviceRoads.Choice(rawValue: road), choice != .any else {
                throw arguments.usageError("option '--road' must be home or relay, got '\(road)'")
            }
            guard host.companion != nil else {
                throw arguments.usageError("\(host.name) is reached over SSH; --road is for companion hosts")
            }
            options.road = choice
        }
        if let agent = arguments.string("agent") {
            guard let target = AgentTarget(agent) else {
                throw arguments.usageError(
                    "option '--agent' must be a pane id (w1:p2), SESSION/PANE or an agent's name, got \(HerdrCommand.posixQuoted(agent))"
                )
            }
            options.agent = target
        }
        let terminal = LocalTerminal()
        let predict = try arguments.string("predict").map { word in
            guard let mode = EchoPredictor.Mode(rawValue: word) else {
                throw arguments.usageError("option '--predict' must be adaptive, always or never, got '\(word)'")
            }
            return mode
        }
        if arguments.flag("screen") {
            guard host.companion != nil else {
                throw arguments.usageError("\(host.name) is reached over SSH; --screen is for companion hosts")
            }
            let size = terminal.size
            let view = ScreenView(rows: size.rows, columns: size.cols, predict: predict ?? .adaptive)
            terminal.screenView = view
            options.screen = { frame in view.draw(frame) }
        } else if predict != nil {
            throw arguments.usageError("--predict is for screen sessions: add --screen")
        }
        options.identityFiles = try HostCommands.identityFiles(arguments)
        options.agentSocketPath = AgentsCommand.agentSocket
        options.promptResponder = answerPrompts
        // Output goes to the terminal from the connection's own thread: no handoff per echo, and a
        // terminal that does not keep up holds the host back in its SSH window.
        options.directOutput = { bytes in (try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, bytes: bytes)) != nil }
        let acceptNew = arguments.flag("accept-new-host-key")
        let session = TerminalSession(profile: host, store: store, options: options) { challenge in
            StandardError.write(HostKeyPromptText.firstUse(challenge))
            if acceptNew {
                StandardError.write("Pinned it (--accept-new-host-key).\n")
                return true
            }
            return await BlockingCall.run { TerminalPrompt.confirm(prompt: "Trust this host key and connect? [y/N] ") }
        }
        let interpretEscapes = terminal.isInteractive
        return try await attach(session, host: host, terminal: terminal) { session in
            let input = session.input
            let view = terminal.screenView
            StandardInputPump(
                send: { bytes in
                    input.send(bytes)
                    view?.typed(bytes)
                }, interpretEscapes: interpretEscapes,
                onAction: { action in
                    switch action {
                    case .disconnect: session.disconnect()
                    case .showHelp: StandardError.write(EscapeSequence.help)
                    case .send(let bytes):
                        session.send(bytes)
                        view?.typed(bytes)
                    }
                },
                onEnd: { session.input.sendEOF() }
            ).start()
        }
    }

    /// Connects `session` and runs it in this terminal until it ends: raw mode, window changes,
    /// status lines, SIGTERM and SIGHUP; `startInput` feeds it keystrokes once it runs. Returns
    /// the exit code; how it ended goes to `report` (stderr by default).
    @MainActor
    static func attach(
        _ session: TerminalSession, host: HostProfile, terminal: LocalTerminal,
        report: @escaping (String) -> Void = { StandardError.write($0) },
        startInput: (TerminalSession) -> Void
    ) async throws -> ExitCode {
        session.onNotice = { terminal.status($0) }
        if let road = host.companion {
            var roads: [String] = []
            if session.options.road != .relay { roads += road.home.map { "home network \($0)" } }
            if session.options.road != .home, let relay = road.relay {
                roads.append("relay \((try? RelayEndpoint(parsing: relay))?.authority ?? relay)")
            }
            terminal.status("Connecting to \(host.name) (\(roads.joined(separator: ", ")))...")
        } else {
            terminal.status(
                "Connecting to \(host.name) (\(host.username)@\(HostCommands.endpoint(CanonicalHost.hostname(host.hostname), host.port)))..."
            )
        }
        let size = terminal.size
        await session.connect(cols: size.cols, rows: size.rows)
        guard session.state == .connected else {
            return finish(session, terminal: terminal, signal: nil, report: report)
        }
        if let road = session.road { terminal.status("Connected via \(road).") }
        if let agent = session.resolvedAgent {
            let name = agent.name.map { "\($0) " } ?? ""
            terminal.status("In the pane of agent \(name)(\(agent.session)/\(agent.pane)).")
        }

        try terminal.enterRawMode()
        defer { terminal.restore() }
        var endingSignal: Int32?
        let watcher = try SignalWatcher(signals: [SIGWINCH, SIGTERM, SIGHUP], queue: .main) { number in
            MainActor.assumeIsolated {
                if number == SIGWINCH {
                    let size = terminal.size
                    terminal.screenView?.resize(rows: size.rows, columns: size.cols)
                    session.resize(cols: size.cols, rows: size.rows)
                } else {
                    endingSignal = number
                    session.disconnect()
                }
            }
        }
        defer { watcher.cancel() }
        startInput(session)

        var lastState = session.state
        while !session.state.isFinal {
            await nextChange(of: session)
            guard session.state != lastState else { continue }
            switch session.state {
            case .reconnecting(let attempt, let reason):
                if host.companion != nil {
                    terminal.status(
                        attempt == 1
                            ? "The link dropped (\(reason)); reconnecting..."
                            : "Reconnecting (attempt \(attempt)): \(reason)")
                } else {
                    terminal.status(
                        attempt == 1 ? "\(reason); reattaching..." : "Reattaching (attempt \(attempt)): \(reason)")
                }
            case .connected:
                if case .reconnecting = lastState {
                    terminal.status(
                        host.companion != nil
                            ? "Reconnected via \(session.road.map(\.description) ?? "the relay"); the session resumed where it was."
                            : "Reattached.")
                }
            default:
                break
            }
            lastState = session.state
        }
        terminal.restore()
        return finish(session, terminal: terminal, signal: endingSignal, report: report)
    }

    /// Prints how the session ended and picks the exit code.
    @MainActor
    static func finish(
        _ session: TerminalSession, terminal: LocalTerminal, signal: Int32?, report: (String) -> Void
    ) -> ExitCode {
        if let signal { return .signal(signal) }
        guard case .failed(let message) = session.state else { return .success }
        report("error: \(message)\n")
        switch session.failureKind {
        case .hostKeyChanged:
            if let challenge = session.rejectedHostKey {
                report(
                    "If you know why it changed, forget the old key with: herdr-remote forget-host-key \(challenge.endpoint)\n"
                )
            }
            return RemoteExitCode.hostKeyRefused
        case .hostKeyNotTrusted: return RemoteExitCode.hostKeyRefused
        case .authentication:
            report(
                "Authorize this device with the line from `herdr-remote key`, or store a password with `herdr-remote password`.\n"
            )
            return RemoteExitCode.authenticationFailed
        case .unreachable, .handshake: return RemoteExitCode.unreachable
        case .connectionLost: return RemoteExitCode.connectionLost
        case .remoteCommand: return RemoteExitCode.remoteCommandFailed
        case .invalidSessionName: return .config
        case .local: return .ioError
        case .pairingGone:
            report("Pair again: run `herdr-host pair` on the computer and scan its code here.\n")
            return RemoteExitCode.pairingGone
        case .relayRefused: return RemoteExitCode.relayRefused
        case .agentNotFound: return RemoteExitCode.agentNotFound
        case .agentsUnavailable: return RemoteExitCode.agentsUnavailable
        case nil: return .failure
        }
    }

    /// Resumes after the session's state next changes.
    @MainActor
    static func nextChange(of session: TerminalSession) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            withObservationTracking {
                _ = session.state
            } onChange: {
                continuation.resume()
            }
        }
    }

    /// Password and keyboard-interactive prompts, asked on the terminal (this runs on the
    /// connection's thread, which may block).
    static let answerPrompts: @Sendable (KeyboardInteractiveChallenge) -> [String]? = { challenge in
        if !challenge.instruction.isEmpty { StandardError.write(challenge.instruction + "\n") }
        var answers: [String] = []
        for prompt in challenge.prompts {
            guard let answer = try? TerminalPrompt.readLine(prompt: prompt.text, echo: prompt.echo) else { return nil }
            answers.append(answer)
        }
        return answers
    }
}

/// What the first-use prompt says, in the words ssh users know.
enum HostKeyPromptText {
    static func firstUse(_ challenge: HostKeyChallenge) -> String {
        """
        The authenticity of host '\(challenge.hostname)' (port \(challenge.port)) can't be established.
        \(keyType(challenge.algorithm)) key fingerprint is \(challenge.fingerprintSHA256).
        This key is not known yet; compare it with `ssh-keygen -lf /etc/ssh/ssh_host_\(fileType(challenge.algorithm))_key.pub` on the host.

        """
    }

    static func keyType(_ algorithm: String) -> String {
        switch algorithm {
        case "ssh-ed25519": "ED25519"
        case let name where name.hasPrefix("ecdsa-"): "ECDSA"
        case "ssh-rsa": "RSA"
        default: algorithm
        }
    }

    static func fileType(_ algorithm: String) -> String {
        switch algorithm {
        case "ssh-ed25519": "ed25519"
        case let name where name.hasPrefix("ecdsa-"): "ecdsa"
        case "ssh-rsa": "rsa"
        default: "*"
        }
    }
}
