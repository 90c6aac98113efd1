import CLISupport
import Foundation
import Glibc
import HerdrKit
import SSHPairingHost

/// Everything the foreground needs, found before anything is written: who and where this computer
/// is, which host keys to pin, which authorized_keys to change, and where sshd will find this program.
struct PairingPlan: Sendable {
    var options: ForegroundOptions
    var user: String
    var computerName: String
    var hostnames: [String]
    var port: Int
    var fingerprints: [String]
    var authorizedKeysPath: String
    var helperPath: String
    var stateBase: String

    /// Looks everything up. Problems a person fixes on the command line are ``UsageError``s (64);
    /// others are ``HostError``s (1).
    static func discover(
        _ options: ForegroundOptions, commandPath: [String] = ["herdr-pair"],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PairingPlan {
        func usage(_ problem: String) -> UsageError { UsageError(.invalidValue, problem, commandPath: commandPath) }

        guard let account = getpwuid(geteuid()), let namePointer = account.pointee.pw_name else {
            throw HostError(.notFound, "This user (uid \(geteuid())) has no passwd entry")
        }
        let user = String(cString: namePointer)
        var home = environment["HOME"] ?? ""
        if !home.hasPrefix("/") { home = StateLocation.passwdHome() ?? "/" }

        var hostnames = options.hosts
        var computerName = Self.localHostName()
        if hostnames.isEmpty {
            guard let tailscale = ExternalCommand.find("tailscale", environment: environment) else {
                throw usage(
                    "tailscale is not installed, so name this computer with --host (its MagicDNS name or 100.x address)"
                )
            }
            let output = try ExternalCommand.run(tailscale, ["status", "--json"], timeout: 15)
            guard output.status == 0 else {
                let reason = String(decoding: output.stderr, as: UTF8.self).trimmingCharacters(
                    in: .whitespacesAndNewlines)
                throw usage(
                    "tailscale status failed (\(reason.isEmpty ? "status \(output.status)" : reason)); start "
                        + "Tailscale or name this computer with --host")
            }
            let status = try TailscaleStatus(json: output.stdout)
            guard status.isRunning else {
                throw usage(
                    "Tailscale is \(status.backendState ?? "not running"); start it or name this computer with --host")
            }
            hostnames = status.pairingHostnames
            guard !hostnames.isEmpty else {
                throw usage("tailscale status names no usable host for this computer; give one with --host")
            }
            if let name = status.computerName { computerName = name }
        }
        hostnames = Array(hostnames.prefix(PairingPayload.maximumHostnames))
        computerName = String(computerName.prefix(PairingPayload.maximumNameLength))

        let needsSSHD = options.hostKeyFiles.isEmpty || options.authorizedKeys == nil || options.port == nil
        let address = hostnames.first { $0.hasPrefix("100.") } ?? "100.64.0.1"
        let sshd = needsSSHD ? SSHDSettings.query(user: user, host: hostnames[0], address: address) : nil

        var fingerprints: [String]
        if !options.hostKeyFiles.isEmpty {
            fingerprints = HostKeyFingerprints.fingerprints(ofPublicKeyFiles: options.hostKeyFiles)
        } else {
            let configured = (sshd?.hostKeyFiles ?? []).map { $0 + ".pub" }
            fingerprints = HostKeyFingerprints.fingerprints(ofPublicKeyFiles: configured)
            if fingerprints.isEmpty {
                fingerprints = HostKeyFingerprints.fingerprints(
                    ofPublicKeyFiles: HostKeyFingerprints.defaultPublicKeyFiles)
            }
        }
        guard !fingerprints.isEmpty else {
            throw HostError(
                .notFound,
                "Found no Ed25519 or ECDSA host key of the local sshd; is the OpenSSH server installed? Name one with --host-key"
            )
        }

        let port = options.port ?? sshd?.ports.first ?? 22

        let defaultFile = (home == "/" ? "" : home) + "/.ssh/authorized_keys"
        let authorizedKeysPath =
            options.authorizedKeys ?? sshd?.authorizedKeysPath(user: user, home: home, uid: geteuid()) ?? defaultFile
        let directory = (authorizedKeysPath as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: directory) {
            guard authorizedKeysPath == defaultFile else {
                throw HostError(.notFound, "The directory of \(authorizedKeysPath) does not exist")
            }
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw HostError(.io, "Could not create \(directory): \(String(cString: strerror(errno)))")
            }
        }

        guard let resolved = realpath("/proc/self/exe", nil) else {
            throw HostError(.notFound, "Cannot find this program's own path through /proc/self/exe")
        }
        let helperPath = String(cString: resolved)
        free(resolved)

        return PairingPlan(
            options: options, user: user, computerName: computerName, hostnames: hostnames, port: port,
            fingerprints: fingerprints, authorizedKeysPath: authorizedKeysPath, helperPath: helperPath,
            stateBase: StateLocation.base(environment: environment))
    }

    /// The code for this plan with a given id, key seed and expiry.
    func payload(pairingID: [UInt8], seed: [UInt8], expiresAt: Date) -> PairingPayload {
        PairingPayload(
            pairingID: pairingID, computerName: computerName, username: user, platform: .unix, hostnames: hostnames,
            port: port, hostKeyFingerprints: fingerprints, oneTimeKeySeed: seed, expiresAt: expiresAt,
            session: options.session)
    }

    /// Checks that a device would accept the code, before anything is written; the error names the field.
    func validate() throws {
        let probe = payload(
            pairingID: [UInt8](repeating: 7, count: PairingPayload.pairingIDSize),
            seed: [UInt8](repeating: 7, count: 32),
            expiresAt: Date().addingTimeInterval(TimeInterval(options.lifetime)))
        do {
            _ = try PairingPayload(parsing: probe.url)
        } catch {
            throw HostError(.malformed, "A device would refuse this pairing code: \(error.message)")
        }
    }

    private static func localHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "computer" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.split(separator: ".").first.map(String.init) ?? "computer"
    }
}
