import CLISupport
import Foundation

/// Who runs a pairing and what it promised, written by the foreground helper into its state directory
/// (file `owner`) before its one-time line exists, read by the enroll command and by the sweep.
///
///     herdr-pair-state 1
///     id <pairing id>
///     pid <pid>
///     start <start time in clock ticks>
///     boot <boot id>
///     expires <unix seconds>
///     approval <seconds>
///     key ssh-ed25519 <base64 of the one-time public key>
public struct OwnerRecord: Sendable, Equatable {
    static let header = "herdr-pair-state 1"
    /// The largest owner file read.
    static let maximumBytes = 4096

    public var pairingID: PairingID
    /// The foreground helper.
    public var owner: ProcessIdentity
    /// When the code expires.
    public var expiresAt: Date
    /// How long the person has to answer once a device asked, in seconds.
    public var approvalWindow: Int
    /// The one-time public key (`ssh-ed25519 <b64>`); a device may not enroll with it.
    public var oneTimeKey: String

    public init(pairingID: PairingID, owner: ProcessIdentity, expiresAt: Date, approvalWindow: Int, oneTimeKey: String)
    {
        self.pairingID = pairingID
        self.owner = owner
        // Whole seconds, as the record is written.
        self.expiresAt = Date(timeIntervalSince1970: expiresAt.timeIntervalSince1970.rounded(.down))
        self.approvalWindow = approvalWindow
        self.oneTimeKey = oneTimeKey
    }

    public var text: String {
        [
            Self.header, "id \(pairingID.text)", "pid \(owner.pid)", "start \(owner.startTime)", "boot \(owner.bootID)",
            "expires \(Int64(expiresAt.timeIntervalSince1970.rounded(.down)))", "approval \(approvalWindow)",
            "key \(oneTimeKey)",
        ].joined(separator: "\n") + "\n"
    }

    public init(text: String) throws(HostError) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first == Substring(Self.header) else {
            throw HostError(.malformed, "The owner record has no header")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let space = line.firstIndex(of: " ") else {
                throw HostError(.malformed, "Malformed owner line: \(line)")
            }
            fields[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        guard let id = fields["id"].flatMap(PairingID.init(text:)), let pid = fields["pid"].flatMap(Int32.init),
            let start = fields["start"].flatMap(UInt64.init), let boot = fields["boot"], !boot.isEmpty,
            let expires = fields["expires"].flatMap(Int64.init), let approval = fields["approval"].flatMap(Int.init),
            approval > 0, let key = fields["key"]
        else { throw HostError(.malformed, "The owner record is missing a field") }
        self.init(
            pairingID: id, owner: ProcessIdentity(pid: pid, startTime: start, bootID: boot),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expires)), approvalWindow: approval, oneTimeKey: key)
    }
}
