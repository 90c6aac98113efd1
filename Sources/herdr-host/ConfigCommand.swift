import CLISupport
import Foundation
import HerdrHostAgent
import HerdrKit

/// `herdr-host config [KEY [VALUE]]`: this computer's session settings.
enum ConfigCommand {
    static let spec = CommandSpec(
        name: "config", abstract: "Show or change how this computer runs terminal sessions.",
        discussion: """
            With no KEY, shows every setting. With a KEY, shows that one; with a VALUE too, sets it; \
            with --unset, returns it to its default. A running `herdr-host run` uses a new \
            session-command for the next session; the others take effect when it restarts.

            Keys:
              session-command  What every session runs instead of herdr's attach (default:
                               exec "$SHELL" -lc 'herdr session attach NAME', or 'herdr' for
                               the default session), with sh -c in your home directory; the
                               session name the device asked for is in $HERDR_SESSION (empty
                               for the default). The device never chooses the command.
              grace-period     How long a session waits, its output kept, for its device to
                               come back after the link drops: seconds, or with m/h/d
                               (default 15m; 1s to 7d).
              resume-buffer    Output kept for a device that is away; more ends the session,
                               and the device attaches afresh (default 8MiB; 1MiB to 1GiB,
                               K/M/G or KiB/MiB/GiB).
              home-listen      Where herdr-host run listens for devices on the home network:
                               ADDRESS:PORT ([::]:PORT for every address, or one home-network
                               address of this machine), or off (default [::]:4610). Only
                               home-network peers get through.
              home-refuse      Interfaces the home door never serves: comma-separated names
                               or NAME* prefixes (default: the cellular ones,
                               wwan*,wwp*,rmnet*,ccmni*,pdp_ip*).

            Examples:
              herdr-host config session-command 'tmux new-session -A -s "${HERDR_SESSION:-main}"'
              herdr-host config grace-period 1h
              herdr-host config grace-period --unset
              herdr-host config home-listen off
            """,
        arguments: [
            PositionalSpec(
                "key", help: "session-command, grace-period, resume-buffer, home-listen or home-refuse.",
                isRequired: false, completion: .values(keys)),
            PositionalSpec("value", help: "The new value.", isRequired: false),
        ],
        flags: [FlagSpec("unset", help: "Return KEY to its default.")],
        handler: { arguments in
            try run(arguments)
        })

    static let keys = ["session-command", "grace-period", "resume-buffer", "home-listen", "home-refuse"]

    static func run(_ arguments: ParsedArguments) throws -> ExitCode {
        let directory = AgentDirectory.standard()
        var settings = AgentSettings.load(directory)
        guard let key = arguments.positional("key") else {
            for key in keys { print("\(key) = \(describe(key, settings))") }
            return .success
        }
        guard keys.contains(key) else {
            throw HostCommandError(.usage, "no setting '\(key)' (settings: \(keys.joined(separator: ", ")))")
        }
        let value = arguments.positional("value")
        if value != nil, arguments.flag("unset") {
            throw HostCommandError(.usage, "give a value or --unset, not both")
        }
        guard value != nil || arguments.flag("unset") else {
            print(describe(key, settings))
            return .success
        }
        switch key {
        case "session-command":
            settings.sessionCommand = try value.map { text in
                guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, !text.contains("\0") else {
                    throw HostCommandError(.usage, "session-command must not be empty (use --unset for the default)")
                }
                return text
            }
        case "grace-period":
            settings.gracePeriod = try value.map { text in
                guard let seconds = SettingValue.seconds(text), AgentSettings.gracePeriodRange.contains(seconds) else {
                    throw HostCommandError(.usage, "grace-period must be 1s to 7d, e.g. 900, 15m, 2h (not '\(text)')")
                }
                return seconds
            }
        case "home-listen":
            if let value, value != HomeDoorConfiguration.off {
                do {
                    _ = try HomeDoorConfiguration(listen: value)
                } catch {
                    throw HostCommandError(.usage, "\(error)")
                }
            }
            settings.homeListen = value
        case "home-refuse":
            let patterns = value.map {
                $0.isEmpty ? [] : $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
            if let patterns {
                do {
                    _ = try HomeDoorConfiguration(
                        listen: HomeDoorConfiguration.defaultListen, refusedInterfaces: patterns)
                } catch {
                    throw HostCommandError(.usage, "\(error)")
                }
            }
            settings.homeRefuse = patterns
        default:
            settings.resumeBuffer = try value.map { text in
                guard let bytes = SettingValue.bytes(text), AgentSettings.resumeBufferRange.contains(bytes) else {
                    throw HostCommandError(.usage, "resume-buffer must be 1MiB to 1GiB, e.g. 8MiB, 64M (not '\(text)')")
                }
                return bytes
            }
        }
        do {
            try settings.save(directory)
        } catch {
            throw HostCommandError(.failure, "\(error)")
        }
        print("\(key) = \(describe(key, settings))")
        return .success
    }

    static func describe(_ key: String, _ settings: AgentSettings) -> String {
        let effective = settings.sessionSettings
        switch key {
        case "session-command":
            return settings.sessionCommand ?? "(herdr's attach, the default)"
        case "grace-period":
            return
                "\(SettingValue.describeSeconds(Int(effective.gracePeriod)))\(settings.gracePeriod == nil ? " (default)" : "")"
        case "home-listen":
            return settings.homeListen ?? "\(HomeDoorConfiguration.defaultListen) (default)"
        case "home-refuse":
            guard let patterns = settings.homeRefuse else {
                return "\(HomeDoorConfiguration.defaultRefusedInterfaces.joined(separator: ",")) (default)"
            }
            return patterns.isEmpty ? "(none)" : patterns.joined(separator: ",")
        default:
            return
                "\(SettingValue.describeBytes(effective.resumeBuffer))\(settings.resumeBuffer == nil ? " (default)" : "")"
        }
    }
}

/// Durations and sizes as people type them: `15m`, `8MiB`.
enum SettingValue {
    static func seconds(_ text: String) -> Int? {
        let units: [(String, Int)] = [("d", 86400), ("h", 3600), ("m", 60), ("s", 1), ("", 1)]
        return scaled(text, units)
    }

    static func bytes(_ text: String) -> Int? {
        let units: [(String, Int)] = [
            ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30),
            ("", 1),
        ]
        return scaled(text, units)
    }

    private static func scaled(_ text: String, _ units: [(String, Int)]) -> Int? {
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            let digits = text.dropLast(suffix.count)
            guard (1...12).contains(digits.count), digits.allSatisfy(\.isASCII), let number = Int(digits) else {
                continue
            }
            let (product, overflow) = number.multipliedReportingOverflow(by: factor)
            return overflow ? nil : product
        }
        return nil
    }

    static func describeSeconds(_ seconds: Int) -> String {
        for (suffix, factor) in [("d", 86400), ("h", 3600), ("m", 60)] where seconds % factor == 0 {
            return "\(seconds / factor)\(suffix)"
        }
        return "\(seconds)s"
    }

    static func describeBytes(_ bytes: Int) -> String {
        for (suffix, factor) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] where bytes % factor == 0 {
            return "\(bytes / factor)\(suffix)"
        }
        return "\(bytes) bytes"
    }
}
