import CLISupport
import Foundation
import HerdrHostAgent
import HerdrKit
import Plumbing
import RelayClient
import RelayProtocol

/// `devices`, `unpair`, `status`: the paired devices and the agent.
enum DeviceCommands {
    static let devices = CommandSpec(
        name: "devices", abstract: "List the paired devices: name, key fingerprint, relay or home network, state.",
        handler: { _ in
            let registry = DeviceRegistry(directory: AgentDirectory.standard())
            let list: [PairedDevice]
            do {
                list = try registry.devices()
            } catch {
                throw HostCommandError(.failure, "\(error)")
            }
            guard !list.isEmpty else {
                print("No devices paired yet. Pair one with: herdr-host pair --relay https://relay.example.com")
                return .success
            }
            var rows = [["NAME", "DEVICE KEY", "RELAY", "STATE", "LAST SEEN"]]
            for device in list {
                rows.append([
                    device.name, device.fingerprint, device.relay.map(relayHost) ?? "home network only", state(device),
                    device.lastSeen.map(describe) ?? "never",
                ])
            }
            print(table(rows), terminator: "")
            return .success
        })

    static let unpair = CommandSpec(
        name: "unpair", abstract: "Remove a paired device: delete its relay room, if any, then forget it here.",
        discussion: """
            DEVICE is its name, or the start of its device key fingerprint (as `devices` shows it, at \
            least 8 characters). The relay room is deleted with a signed request, so the device learns \
            the pairing is gone the next time it connects; if the relay cannot be reached, the device \
            is forgotten here anyway and the room expires after 30 days unused. A device paired on the \
            home network alone keeps its side until it is removed there (herdr-remote remove).
            """,
        arguments: [PositionalSpec("device", help: "The device to remove.")],
        handler: { arguments in
            let reference = arguments.positional("device") ?? ""
            let registry = DeviceRegistry(directory: AgentDirectory.standard())
            let matches: [PairedDevice]
            do {
                matches = try registry.device(matching: reference)
            } catch {
                throw HostCommandError(.failure, "\(error)")
            }
            guard let device = matches.first else {
                let known = ((try? registry.devices()) ?? []).map(\.name)
                throw HostCommandError(
                    .usage,
                    "no paired device matches '\(reference)'"
                        + (known.isEmpty ? " (none are paired)" : " (paired: \(known.joined(separator: ", ")))"))
            }
            guard matches.count == 1 else {
                throw HostCommandError(
                    .usage,
                    "'\(reference)' matches \(matches.count) devices (\(matches.map { "\($0.name) \($0.fingerprint)" }.joined(separator: ", "))); give a key fingerprint"
                )
            }
            let secret = try? registry.roomSecret(for: device.id)
            // Marked first: the agent, seeing the room end, knows it was this command.
            _ = try? registry.update(device.id) { $0.ended = PairedDevice.unpairingHere }
            let deleted = await BlockingCall.run { () -> String in
                guard device.relay != nil else {
                    return "it was paired on the home network only, so the device keeps it until it is removed there"
                }
                guard let secret, let key = try? RelayJoinKey(roomSecret: secret),
                    let endpoint = try? RelayEndpoint(parsing: device.relay ?? "")
                else { return "no room secret is kept here, so the relay room was not deleted" }
                do throws(ConnectionError) {
                    try RelayHTTPClient(endpoint: endpoint).deleteRoom(room: device.room, joinKey: key)
                    return "the relay room was deleted"
                } catch {
                    return "the relay room could not be deleted (\(error.message)); it expires after 30 days unused"
                }
            }
            do {
                try registry.remove(device.id)
            } catch {
                throw HostCommandError(.failure, "\(error)")
            }
            print("Unpaired \(device.name) (\(device.fingerprint)): \(deleted).")
            return .success
        })

    static let status = CommandSpec(
        name: "status",
        abstract:
            "Say whether the agent runs, what each relay room is doing, whom the home door refused, and herdr's state.",
        handler: { _ in
            let directory = AgentDirectory.standard()
            let devices = (try? DeviceRegistry(directory: directory).devices()) ?? []
            guard let status = try? AgentStatus.load(directory), status.isRunning else {
                print("herdr-host run is not running.")
                if !devices.isEmpty {
                    print(
                        "\(devices.count) device(s) paired; start it with: systemctl --user start herdr-host (or: herdr-host run)"
                    )
                }
                return HerdrHost.notRunning
            }
            print("herdr-host run is running (pid \(status.pid)) since \(describe(status.startedAt)).")
            var rows = [["DEVICE", "ROOM", "SINCE"]]
            for room in status.rooms { rows.append([room.name, room.state, describe(room.since)]) }
            for device in devices where !status.rooms.contains(where: { $0.device == device.id }) {
                let why =
                    device.relay == nil
                    ? "paired on the home network (no relay room)" : device.ended ?? "finishing its pairing"
                rows.append([device.name, "not parked: " + why, ""])
            }
            if rows.count > 1 { print(table(rows), terminator: "") }
            if let home = status.home { print(homeDoorLines(home), terminator: "") }
            print(herdrLines(status.herdr), terminator: "")
            return .success
        })

    /// herdr's part of `status`: its state, its sessions' and the agents count, as herdr-host
    /// last read them (it reads herdr while a device watches the agents).
    static func herdrLines(_ herdr: AgentStatus.HerdrStatus?) -> String {
        guard let herdr else {
            return "herdr: not read since herdr-host started (it reads herdr while a device watches its agents).\n"
        }
        let when =
            herdr.watching ? "since \(describe(herdr.since))" : "when a device last watched, \(describe(herdr.since))"
        guard herdr.state == "ready" else {
            return "herdr: \(herdr.state)\(herdr.detail.map { " (\($0))" } ?? "") \(when).\n"
        }
        var agents = "\(herdr.agents) agent\(herdr.agents == 1 ? "" : "s")"
        if herdr.blocked > 0 { agents += " (\(herdr.blocked) blocked)" }
        if herdr.omitted > 0 { agents += " and \(herdr.omitted) more past the board's bound" }
        var lines = [
            "herdr: ready, \(herdr.sessions.count) session\(herdr.sessions.count == 1 ? "" : "s"), \(agents), \(when)."
        ]
        for session in herdr.sessions {
            lines.append("  \(session.name): \(session.state)\(session.detail.map { " (\($0))" } ?? "")")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The home door's part of `status`: where, what devices are told, who was refused and why.
    static func homeDoorLines(_ home: AgentStatus.HomeDoorStatus) -> String {
        if let error = home.error { return "Home door: not listening on \(home.listen): \(error)\n" }
        var lines = [
            "Home door: listening on \(home.listen); devices are told \(home.addresses.isEmpty ? "no address (no home network?)" : home.addresses.joined(separator: ", "))."
        ]
        if let last = home.lastDevice {
            lines.append("  Last device: \(last.name) from \(last.peer) at \(describe(last.at)).")
        }
        lines.append(
            "  Refused: \(home.refusedCount) before a byte was read; \(home.failedHandshakes) failed handshake(s).")
        if let refused = home.lastRefused {
            lines.append("  Last refused: \(refused.peer) at \(describe(refused.at)): \(refused.message).")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func state(_ device: PairedDevice) -> String {
        if let ended = device.ended { return "removed on the other side: \(ended)" }
        if device.relay == nil { return "paired on the home network" }
        return device.established ? "established" : "confirmed, not yet established"
    }

    static func relayHost(_ origin: String) -> String {
        (try? RelayEndpoint(parsing: origin)).map(\.authority) ?? origin
    }

    static func describe(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    static func table(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}

/// A failure of a herdr-host command: its exit code and the message for stderr.
struct HostCommandError: Error, ExitCodeConvertible, CustomStringConvertible {
    let exitCode: ExitCode
    let description: String

    init(_ exitCode: ExitCode, _ description: String) {
        self.exitCode = exitCode
        self.description = description
    }
}
