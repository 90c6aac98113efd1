import Foundation

/// Removes what helpers that died without cleaning up (`kill -9`, a crash, a power cut) left behind:
/// their one-time lines in authorized_keys and their state directories.
///
/// A one-time line is stale when
/// - the state directory it names is a valid herdr-pair state directory of this user whose owner
///   record names a process that is gone (PID, start time and boot id no longer match), or
/// - its state directory cannot be read (another tool's, or removed by hand) and its `expiry-time`
///   has passed (sshd already ignores it then).
///
/// A line whose owner is alive is never touched, even past its expiry: that helper is still waiting
/// for the person's answer and removes the line itself. Many helpers may run at once.
public enum StaleLineSweeper {
    public struct Report: Sendable, Equatable {
        /// The one-time lines removed.
        public var removedLines: [String] = []
        /// The state directories removed.
        public var removedDirectories: [String] = []
    }

    /// Sweeps `file`, then the state directories under `stateBase` whose owner is gone.
    public static func sweep(_ file: AuthorizedKeysFile, stateBase: String, now: Date = Date()) throws(HostError)
        -> Report
    {
        var report = Report()
        var deadDirectories: [PairingStateDirectory] = []
        report.removedLines = try file.removeLines(containing: OneTimeKeyLine.commentPrefix) { line in
            guard let info = OneTimeKeyLineInfo(line: line) else { return false }
            if let path = info.stateDirectory,
                let state = try? PairingStateDirectory.open(path: path, pairingID: info.pairingID, acceptedBases: nil)
            {
                if state.owner.owner.isAlive { return false }
                deadDirectories.append(state)
                return true
            }
            guard let expiry = info.expiresAt else { return false }
            return expiry <= now
        }
        for id in PairingStateDirectory.pairingIDs(inBase: stateBase) {
            guard
                let state = try? PairingStateDirectory.open(
                    path: stateBase + "/" + id.text, pairingID: id, acceptedBases: nil),
                !state.owner.owner.isAlive, !deadDirectories.contains(where: { $0.path == state.path })
            else { continue }
            deadDirectories.append(state)
        }
        for state in deadDirectories where state.remove() {
            report.removedDirectories.append(state.path)
        }
        return report
    }
}
