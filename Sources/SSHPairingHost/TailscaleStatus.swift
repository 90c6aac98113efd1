import Foundation
import HerdrKit

/// What `tailscale status --json` says about this computer (its `Self` entry), and the host names a
/// pairing code offers from it.
public struct TailscaleStatus: Sendable, Equatable {
    /// `BackendState`: `Running` when the computer is on the tailnet.
    public var backendState: String?
    /// `Self.DNSName`, the MagicDNS FQDN (`studio.tail1234.ts.net.`).
    public var dnsName: String?
    /// `Self.HostName`, the computer's own name as Tailscale shows it (`James's Mac Studio`).
    public var hostName: String?
    /// `Self.TailscaleIPs`: one 100.x address and one fd7a:115c:a1e0:: address.
    public var addresses: [String]

    public init(backendState: String?, dnsName: String?, hostName: String?, addresses: [String]) {
        self.backendState = backendState
        self.dnsName = dnsName
        self.hostName = hostName
        self.addresses = addresses
    }

    /// Parses the JSON; only the fields above are read, everything else is ignored.
    public init(json: [UInt8]) throws(HostError) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            throw HostError(.malformed, "tailscale status --json did not print a JSON object")
        }
        let me = object["Self"] as? [String: Any]
        self.init(
            backendState: object["BackendState"] as? String, dnsName: me?["DNSName"] as? String,
            hostName: me?["HostName"] as? String, addresses: me?["TailscaleIPs"] as? [String] ?? [])
    }

    public var isRunning: Bool { backendState == nil || backendState == "Running" }

    /// The names for the code's `h`, preferred first:
    /// 1. the MagicDNS FQDN (trailing dot dropped): what the phone saves; it resolves wherever MagicDNS does;
    /// 2. the first 100.x address: works with no DNS at all;
    /// 3. the MagicDNS short name (the FQDN's first label, which is what resolves through the tailnet's
    ///    search domain, unlike `HostName`, which may hold spaces and capitals).
    ///
    /// Names the phone would refuse (``PairingHostNames/isAcceptable(_:)``) are left out.
    public var pairingHostnames: [String] {
        var names: [String] = []
        let fqdn = dnsName.map(CanonicalHost.hostname)
        if let fqdn, !fqdn.isEmpty { names.append(fqdn) }
        if let ipv4 = addresses.first(where: { $0.hasPrefix("100.") }) { names.append(CanonicalHost.hostname(ipv4)) }
        if let fqdn, let label = fqdn.split(separator: ".").first, fqdn.contains(".") { names.append(String(label)) }
        var seen: Set<String> = []
        return names.filter { PairingHostNames.isAcceptable($0) && seen.insert($0).inserted }
    }

    /// A display name for the computer: `HostName`, else the FQDN's first label.
    public var computerName: String? {
        if let hostName, !hostName.trimmingCharacters(in: .whitespaces).isEmpty { return hostName }
        return dnsName.flatMap { $0.split(separator: ".").first.map(String.init) }
    }
}

/// The host-name rule of the pairing code's `h` field, by the phone's own parser: a name is acceptable
/// when a code carrying it parses.
public enum PairingHostNames {
    /// The canonical spelling (trimmed, lowercased, trailing dot dropped) when the phone accepts it.
    public static func canonical(_ raw: String) -> String? {
        let name = CanonicalHost.hostname(raw)
        return isAcceptable(name) ? name : nil
    }

    /// Whether `name` (already canonical) passes the phone's `h` rule: a 100.64.0.0/10 address, an
    /// fd7a:115c:a1e0::/48 address, a single DNS label, or a `.ts.net` name of three or more labels.
    public static func isAcceptable(_ name: String) -> Bool {
        guard !name.isEmpty, !name.contains(","), name == CanonicalHost.hostname(name) else { return false }
        let probe = PairingPayload(
            pairingID: [UInt8](repeating: 1, count: PairingPayload.pairingIDSize), computerName: "probe",
            username: "probe",
            platform: .unix, hostnames: [name], port: 22,
            hostKeyFingerprints: ["SHA256:" + String(repeating: "A", count: 43)],
            oneTimeKeySeed: [UInt8](repeating: 1, count: 32), expiresAt: Date().addingTimeInterval(60))
        return (try? PairingPayload(parsing: probe.url)) != nil
    }
}
