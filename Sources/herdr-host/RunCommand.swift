import CLISupport
import Dispatch
import EndToEndChannel
import Foundation
import Glibc
import HerdrHostAgent
import HerdrKit
import Noise

/// `herdr-host run`: the long-lived agent (`HostAgent`).
enum RunCommand {
    static let spec = CommandSpec(
        name: "run", abstract: "Keep this computer reachable: park in the devices' relay rooms, listen at home.",
        discussion: """
            Parks in each paired device's room on its relay and reconnects by itself, with backoff, when \
            a connection drops or the relay restarts. It also listens on the home network (the home road, \
            \(HomeDoorConfiguration.defaultListen) unless herdr-host config home-listen says otherwise, or \
            off): only peers on this machine's home networks get through, refused before a byte is read \
            (tailnet and public addresses, cellular interfaces), and only a paired device completes the \
            handshake; herdr-host status counts the refusals. A pairing or an unpairing made while it runs is \
            picked up within a second. A device the relay says was removed on the other side (or \
            expired) is no longer parked for, and the log says how to pair again. One agent runs at a \
            time. SIGINT, SIGTERM or SIGHUP stops it (exit 0).

            It logs to stderr, without secrets; a peer address only when the home door closes a connection \
            whose handshake failed. As a systemd user service:

              systemctl --user enable --now herdr-host
              journalctl --user -u herdr-host
            """,
        options: [
            OptionSpec(
                "home-listen", valueName: "addr:port",
                help:
                    "Where the home door listens, or off (default: the home-listen setting, else \(HomeDoorConfiguration.defaultListen))."
            )
        ],
        exitCodes: [.success, .failure, .usage, .unavailable],
        handler: { arguments in
            let door: HomeDoorConfiguration?
            do {
                door = try AgentSettings.load(AgentDirectory.standard()).homeDoor(
                    listen: arguments.string("home-listen"))
            } catch {
                throw arguments.usageError("\(error)")
            }
            return await BlockingCall.run { run(homeDoor: door) }
        })

    static func log(_ message: String) {
        StandardError.write("\(timestamp()) herdr-host: \(message)\n")
    }

    static func run(homeDoor: HomeDoorConfiguration?) -> ExitCode {
        let directory = AgentDirectory.standard()
        let staticKey: KeyPair
        do {
            try directory.create()
            staticKey = try StaticKeyFile.loadOrCreate(directory.staticKeyFile)
        } catch {
            log("error: \(error)")
            return .failure
        }
        // One agent at a time: the lock is held until the process ends.
        let lockPath = directory.url.appendingPathComponent("agent.lock").path
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lock >= 0 else {
            log("error: cannot open \(lockPath): \(String(cString: strerror(errno)))")
            return .failure
        }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            let other = (try? AgentStatus.load(directory)).flatMap { $0 }.map { " (pid \($0.pid))" } ?? ""
            log("error: another herdr-host run is going\(other); stop it first")
            close(lock)
            return .unavailable
        }
        defer { close(lock) }
        let agent = HostAgent(
            directory: directory, staticKey: staticKey, sessionSettings: AgentSettings.load(directory).sessionSettings,
            homeDoor: homeDoor, log: log)
        let watcher = try? SignalWatcher(
            signals: [SIGINT, SIGTERM, SIGHUP], queue: DispatchQueue(label: "herdr-host.signals")
        ) { _ in agent.inputs.push(.stop) }
        defer { watcher?.cancel() }
        log("running; state in \(directory.url.path)")
        agent.run()
        log("stopped")
        return .success
    }

    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}
