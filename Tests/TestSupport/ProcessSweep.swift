import Foundation
import Glibc

/// Ends processes a test started indirectly and lost track of, by PID.
public enum ProcessSweep {
    /// SIGKILLs every process whose command line contains `path`, and its process group when it
    /// leads one (a script sshd started as a session leader, with the `sleep` it waits in).
    /// For scripts that outlive the sshd session that ran them.
    public static func killProcesses(commandLineContaining path: String) {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid > 1,
                let cmdline = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(entry)/cmdline"))
            else { continue }
            let text = String(decoding: cmdline.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            guard text.contains(path) else { continue }
            if getpgid(pid) == pid { kill(-pid, SIGKILL) }
            kill(pid, SIGKILL)
        }
    }
}
