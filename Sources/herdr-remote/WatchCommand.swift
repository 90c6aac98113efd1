import CLISupport
import Foundation
import Glibc
import HerdrKit

/// `watch [HOST…]`: a live board of every computer's agents, and a word when one needs you.
enum WatchCommand {
    static let defaultInterval = 2

    static let spec = CommandSpec(
        name: "watch",
        abstract: "Watch every computer's herdr agents live, and be told when one becomes blocked or done.",
        discussion: """
            It stays connected to each computer, reconnecting as connect does: over SSH it reads herdr \
            (herdr session list --json, herdr api snapshot) every --interval seconds over one kept connection; \
            on the end-to-end roads herdr-host sends the board and its changes. A computer that cannot be \
            reached stays on the board, saying so, and is tried again.

            When an agent becomes blocked (it waits for you) or done, you are told, naming the computer and \
            the agent: the terminal's bell and the OSC 777 and OSC 9 escapes many terminals show as a \
            notification (while the board is on screen), and a desktop notification through notify-send when \
            there is a desktop session (DISPLAY, WAYLAND_DISPLAY or DBUS_SESSION_BUS_ADDRESS). At most once a \
            minute for the same agent and status, and at most 3 alerts in 10 seconds: past that, one alert \
            names the rest. A computer's first board is not news: only changes are told.

            --exec runs CMD for every event (also those held back by the limit, not repeats within the \
            minute), one at a time, with the details in its environment: HERDR_COMPUTER, HERDR_SESSION, \
            HERDR_PANE, HERDR_TARGET (SESSION/PANE), HERDR_AGENT, HERDR_KIND, HERDR_TITLE, HERDR_STATUS, \
            HERDR_PREVIOUS_STATUS (empty for a new agent), HERDR_SINCE, HERDR_EVENT_TIME. CMD is split into \
            words as a shell would, but runs without a shell (no variables, globs or pipes); for those, make \
            it a shell line: --exec 'sh -c "..."'. It gets 30 seconds.

            On a terminal it shows the board: the agents blocked first, then done, working, idle, unknown. \
            Choose one with the arrows, j and k, or its number, and Enter opens its pane as connect --agent \
            does; leaving it (~. or its end) comes back to the board. q or Ctrl-C quits. Without a terminal \
            it prints one line per event on stdout (time, computer, SESSION/PANE, status, previous status \
            or -, agent name or -) and what happens to the computers on stderr.

            Examples:
              herdr-remote watch
              herdr-remote watch studio --exec 'curl -fsS -d @- https://ntfy.sh/mine'
              herdr-remote watch --exec 'sh -c "echo $HERDR_COMPUTER $HERDR_AGENT $HERDR_STATUS >> ~/agents.log"'
            """,
        arguments: [
            PositionalSpec(
                "host", help: "Saved hosts to watch (default: every saved host).", isRequired: false, isRepeating: true,
                completion: HostCommands.savedNames)
        ],
        options: [
            OptionSpec(
                "interval", valueName: "seconds", help: "Over SSH: seconds between two readings of herdr (1-60).",
                defaultValue: String(defaultInterval)),
            OptionSpec(
                "exec", valueName: "command",
                help: "Run this command for every agent that becomes blocked or done (see above)."),
        ],
        flags: [
            FlagSpec(
                "no-notify",
                help: "No bell, terminal escapes or desktop notifications (the board, lines and --exec stay).")
        ],
        exitCodes: RemoteExitCode.watchCodes,
        handler: { @MainActor arguments in
            try await run(arguments)
        })

    @MainActor
    static func run(_ arguments: ParsedArguments) async throws -> ExitCode {
        let interval = try arguments.int("interval", range: 1...60) ?? defaultInterval
        let environment = ProcessInfo.processInfo.environment
        var exec: Notifier.Exec?
        if let line = arguments.string("exec") {
            let words: [String]
            do {
                words = try CommandWords.split(line)
            } catch {
                throw arguments.usageError("option '--exec' cannot be read: \(error)")
            }
            guard let program = CommandWords.program(words[0], path: environment["PATH"] ?? "") else {
                throw arguments.usageError("option '--exec': no program \(words[0]) (not on PATH, or not executable)")
            }
            exec = Notifier.Exec(program: program, arguments: Array(words.dropFirst()))
        }
        let store = try HostCommands.openStore()
        let hosts = try AgentsCommand.hosts(arguments.positionals("host"), in: store)
        var options = BoardWatchOptions()
        options.pollInterval = Double(interval)
        options.session.agentSocketPath = AgentsCommand.agentSocket
        let desktop = arguments.flag("no-notify") ? nil : Notifier.desktopNotifier(environment: environment)
        let notifier = Notifier(desktop: desktop, exec: exec)
        let interactive = RawTerminalMode.isTerminal(fd: STDIN_FILENO) && RawTerminalMode.isTerminal(fd: STDOUT_FILENO)
        let controller = WatchController(
            hosts: hosts, store: store, options: options, notifier: notifier, interactive: interactive,
            terminalAlerts: !arguments.flag("no-notify"))
        return await controller.run()
    }
}
