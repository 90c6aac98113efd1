import Foundation
import Glibc

/// A computer and a device paired through a relay by the real programs, as a person does it:
/// `herdr-host pair --relay ORIGIN` shows its code (a `herdr://` link, or a web client's address
/// with `--web`), `herdr-remote pair CODE --yes --no-connect`
/// shows the short code, which is typed on the computer once it asks.
public enum RelayProgramPairing {
    /// Starts a program of the computer's (`computer` true) or of the device's: on this machine
    /// by default, or where a fixture puts them (a namespace of an emulated network).
    public typealias Launch = (
        _ program: String, _ arguments: [String], _ computer: Bool, _ environment: [String: String]
    ) throws -> InteractiveProcess

    public static func here(
        _ program: String, _ arguments: [String], _ computer: Bool, _ environment: [String: String]
    ) throws -> InteractiveProcess {
        try InteractiveProcess(program, arguments, environment: environment)
    }

    /// Pairs the computer configured by `hostEnvironment` (its XDG_CONFIG_HOME), named
    /// `computerName`, with the device of `deviceEnvironment`, named `deviceName`; throws with
    /// what either program said when a step does not come.
    public static func pair(
        origin: String, computerName: String, deviceName: String, hostEnvironment: [String: String],
        deviceEnvironment: [String: String], hostArguments: [String] = [], launch: Launch = here
    ) throws {
        let host = try launch(
            BuiltProgram.path("herdr-host"), ["pair", "--relay", origin, "--name", computerName] + hostArguments, true,
            hostEnvironment)
        guard let code = host.waitForCompanionCode(), host.waitFor("waiting for a device") else {
            host.signal(SIGTERM)
            _ = host.wait()
            throw FixtureError("herdr-host pair showed no code, or did not park: \(host.stdout) \(host.stderr)")
        }
        let device = try launch(
            BuiltProgram.path("herdr-remote"), ["pair", code, "--yes", "--no-connect", "--name", deviceName], false,
            deviceEnvironment)
        guard let shown = device.waitForMatch(#"Type this code on [^:]+: (\d{3} \d{3})"#) else {
            throw FixtureError("the device showed no code: \(device.stderr)")
        }
        // Typed once the computer asks (what was typed before the question is thrown away).
        guard host.waitFor("Type the code it shows") else { throw FixtureError("not asked: \(host.stdout)") }
        host.writeLine(shown)
        let deviceStatus = device.wait(timeout: 30)
        let hostStatus = host.wait(timeout: 30)
        guard deviceStatus == 0, hostStatus == 0 else {
            throw FixtureError(
                "pairing failed: device \(String(describing: deviceStatus)) \(device.stderr); host \(String(describing: hostStatus)) \(host.stdout) \(host.stderr)"
            )
        }
    }
}
