extension Pairing {
    /// What the computer's pairing helper answered, decided from its stdout and exit status alone
    /// (interop-facts §4). A pure function: no I/O.
    public enum Verdict: String, Sendable, Equatable, CaseIterable {
        case approved, denied, expired, used, invalid, failed

        /// The tokens the helper prints, one per line.
        static let tokens: [String: Verdict] = [
            "OK": .approved, "DENIED": .denied, "EXPIRED": .expired, "USED": .used, "INVALID": .invalid,
        ]

        /// The rule:
        /// - the answer is the last non-empty line of stdout (CRLF and surrounding spaces tolerated);
        ///   stderr never counts, so a trailing warning cannot hide it;
        /// - a token wins over the exit status (a Windows PowerShell default shell turns 3, 4, 5 into 1);
        /// - `OK` needs exit status 0;
        /// - with no token, statuses 3, 4 and 5 still mean denied, expired and used;
        /// - everything else failed.
        public static func decide(stdout: [UInt8], status: Int?) -> Verdict {
            switch lastLine(of: stdout).flatMap({ tokens[$0] }) {
            case .approved?:
                return status == 0 ? .approved : .failed
            case let token?:
                return token
            case nil:
                switch status {
                case 3: return .denied
                case 4: return .expired
                case 5: return .used
                default: return .failed
                }
            }
        }

        /// The last line with something other than whitespace on it, trimmed; nil if none.
        static func lastLine(of bytes: [UInt8]) -> String? {
            for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).reversed() {
                let text = String(decoding: line, as: UTF8.self).trimmingWhitespace()
                if !text.isEmpty { return text }
            }
            return nil
        }
    }
}
