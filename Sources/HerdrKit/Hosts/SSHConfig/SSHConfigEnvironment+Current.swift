import Foundation
import Glibc

extension SSHConfigEnvironment {
    /// The account running this process as ssh sees it: name, home and uid from the password
    /// database (getpwuid, not `$HOME`), gethostname(2), the process environment, service
    /// names from getservbyname_r(3) and other accounts' homes from getpwnam_r(3).
    public static func current() throws(SSHConfigError) -> SSHConfigEnvironment {
        let uid = getuid()
        guard let account = passwordEntry(uid: uid) else {
            throw SSHConfigError(.unknownUser, "No password database entry for uid \(uid)")
        }
        var name = [CChar](repeating: 0, count: 256)
        let hostname =
            gethostname(&name, name.count - 1) == 0
            ? text(name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }) : "localhost"
        return SSHConfigEnvironment(
            localUser: account.name, homeDirectory: account.home, userID: uid, localHostname: hostname,
            variables: ProcessInfo.processInfo.environment,
            servicePort: { service in
                var entry = servent()
                var result: UnsafeMutablePointer<servent>?
                var buffer = [CChar](repeating: 0, count: 4096)
                guard getservbyname_r(service, "tcp", &entry, &buffer, buffer.count, &result) == 0, result != nil
                else { return nil }
                return Int(UInt16(bigEndian: UInt16(truncatingIfNeeded: entry.s_port)))
            },
            homeOfUser: { user in passwordEntry(name: user)?.home })
    }

    private static func passwordEntry(uid: uid_t) -> (name: String, home: String)? {
        lookUp { entry, buffer, result in getpwuid_r(uid, &entry, buffer, 16384, &result) }
    }

    private static func passwordEntry(name: String) -> (name: String, home: String)? {
        lookUp { entry, buffer, result in getpwnam_r(name, &entry, buffer, 16384, &result) }
    }

    private static func lookUp(
        _ call: (inout passwd, UnsafeMutablePointer<CChar>, inout UnsafeMutablePointer<passwd>?) -> Int32
    ) -> (name: String, home: String)? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: 16384)
        defer { buffer.deallocate() }
        guard call(&entry, buffer, &result) == 0, result != nil, let name = entry.pw_name, let home = entry.pw_dir
        else { return nil }
        return (String(cString: name), String(cString: home))
    }
}
