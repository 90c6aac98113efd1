import Foundation
import Glibc

/// The local-time spellings authorized_keys uses: `expiry-time="YYYYMMDDHHMMSS"` (sshd reads it in the
/// computer's time zone) and the `YYYY-MM-DD` date in a device key's comment.
public enum LocalTime {
    /// `YYYYMMDDHHMMSS` in local time, as sshd's `expiry-time` option reads it.
    public static func expiryTimeString(_ date: Date) -> String {
        let parts = components(date)
        return String(
            format: "%04d%02d%02d%02d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    /// `YYYY-MM-DD` in local time.
    public static func dateString(_ date: Date) -> String {
        let parts = components(date)
        return String(format: "%04d-%02d-%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday)
    }

    /// Parses `YYYYMMDD`, `YYYYMMDDHHMM` or `YYYYMMDDHHMMSS` as local time (sshd's accepted forms),
    /// or the same followed by `Z` for UTC; nil for anything else.
    public static func parseExpiryTime(_ text: String) -> Date? {
        var digits = Substring(text)
        let utc = digits.hasSuffix("Z")
        if utc { digits = digits.dropLast() }
        guard [8, 12, 14].contains(digits.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        func field(_ offset: Int, _ length: Int) -> Int32 {
            let start = digits.index(digits.startIndex, offsetBy: offset)
            return Int32(digits[start..<digits.index(start, offsetBy: length)]) ?? 0
        }
        var parts = tm()
        parts.tm_year = field(0, 4) - 1900
        parts.tm_mon = field(4, 2) - 1
        parts.tm_mday = field(6, 2)
        if digits.count >= 12 {
            parts.tm_hour = field(8, 2)
            parts.tm_min = field(10, 2)
        }
        if digits.count == 14 { parts.tm_sec = field(12, 2) }
        guard (0...11).contains(parts.tm_mon), (1...31).contains(parts.tm_mday), (0...23).contains(parts.tm_hour),
            (0...59).contains(parts.tm_min), (0...60).contains(parts.tm_sec)
        else { return nil }
        parts.tm_isdst = -1
        let seconds = utc ? timegm(&parts) : mktime(&parts)
        guard seconds != -1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func components(_ date: Date) -> tm {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return parts
    }
}
