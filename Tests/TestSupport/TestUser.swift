import Foundation
import Glibc
import Synchronization

/// The unprivileged account that fixtures' sshd lets in. Password and keyboard-interactive
/// logins need a real account with a real password, so the tests make one (they run as root,
/// as CI does). It is reused across runs, its password reset each time; its home is
/// overridden per sshd with `SetEnv HOME=`, so the account itself holds nothing.
public struct TestUser: Sendable {
    public let name: String
    public let password: String
    public let uid: uid_t
    public let gid: gid_t

    private static let prepared = Mutex<[String: TestUser]>([:])

    /// The account for this kind of run ("herdrtest" for tests, others for bench and demo).
    /// Prepared once per process: servers started in parallel share one password.
    public static func ensure(name: String = "herdrtest") throws -> TestUser {
        try prepared.withLock { users in
            if let user = users[name] { return user }
            let user = try prepare(name: name)
            users[name] = user
            return user
        }
    }

    private static func prepare(name: String) throws -> TestUser {
        guard getuid() == 0 else {
            throw FixtureError(
                "The SSH fixtures create the account '\(name)' and run sshd, which needs root; run the tests as root (CI does)"
            )
        }
        if getpwnam(name) == nil {
            // Home /tmp: sshd chdirs there before SetEnv gives the fixture's own HOME.
            try ProcessRunner.run("useradd", ["-M", "-d", "/tmp", "-s", "/bin/bash", name], check: true)
        }
        let password = "Pw-" + UUID().uuidString.prefix(13)
        try ProcessRunner.run("chpasswd", input: Array("\(name):\(password)\n".utf8), check: true)
        // A locked or expired account would make password logins fail for the wrong reason.
        try ProcessRunner.run("usermod", ["-U", "-e", "", name], check: false)
        guard let entry = getpwnam(name) else { throw FixtureError("account \(name) missing after useradd") }
        return TestUser(name: name, password: password, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }
}
