import Foundation

extension EmulatedNetwork {
    /// How old an abandoned run's namespace must be before a new run removes it.
    static let abandonedAge: TimeInterval = 600

    /// Removes what runs killed before their cleanup (a crashed test process) left behind: a
    /// `herdr-e-…` namespace older than ten minutes with no interface but `lo` (its herdr-link,
    /// and so its TUN interfaces, are gone), and `/etc/netns/herdr-e-…` directories as old
    /// without a namespace. A live run's namespaces hold their TUN interfaces within seconds.
    static func removeAbandoned(ip: String) {
        let manager = FileManager.default
        func isOld(_ path: String) -> Bool {
            guard let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date else {
                return false
            }
            return Date().timeIntervalSince(modified) > abandonedAge
        }
        let listed = (try? ProcessRunner.run(ip, ["netns", "list"], timeout: 10).stdout) ?? ""
        let names = listed.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        for name in names where name.hasPrefix("herdr-e-") && isOld("/run/netns/\(name)") {
            guard let links = try? ProcessRunner.run(ip, ["-n", name, "-o", "link", "show"], timeout: 10),
                links.status == 0,
                links.stdout.split(separator: "\n").allSatisfy({ $0.contains(": lo:") })
            else { continue }
            _ = try? ProcessRunner.run(ip, ["netns", "del", name], timeout: 10)
            try? manager.removeItem(atPath: "/etc/netns/\(name)")
        }
        for entry in (try? manager.contentsOfDirectory(atPath: "/etc/netns")) ?? []
        where entry.hasPrefix("herdr-e-") && !names.contains(entry) && isOld("/etc/netns/\(entry)") {
            try? manager.removeItem(atPath: "/etc/netns/\(entry)")
        }
    }
}
