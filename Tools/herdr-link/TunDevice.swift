import CSystem
import Foundation
import Glibc

/// A TUN interface inside a network namespace: the descriptor herdr-link reads and writes bare
/// IP packets on. The interface exists as long as the descriptor is open.
struct TunDevice {
    let fd: Int32
    let interface: String

    struct OpenError: Error, CustomStringConvertible {
        let description: String
    }

    /// Opens `/dev/net/tun` as `interface` in the namespace `/run/netns/NAMESPACE`. The setns
    /// happens on a thread of its own, which then ends, so no other thread changes namespace.
    static func open(interface: String, namespace: String) throws(OpenError) -> TunDevice {
        final class Outcome: @unchecked Sendable {
            var result: Result<TunDevice, OpenError> = .failure(OpenError(description: "the thread did not run"))
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            outcome.result = openHere(interface: interface, namespace: namespace)
            done.signal()
        }
        thread.start()
        done.wait()
        return try outcome.result.get()
    }

    private static func openHere(interface: String, namespace: String) -> Result<TunDevice, OpenError> {
        func failure(_ what: String) -> Result<TunDevice, OpenError> {
            .failure(OpenError(description: "\(what): \(String(cString: strerror(errno)))"))
        }
        let path = "/run/netns/\(namespace)"
        let namespaceFD = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard namespaceFD >= 0 else { return failure("opening \(path) (made by `ip netns add \(namespace)`)") }
        defer { close(namespaceFD) }
        guard csystem_setns_network(namespaceFD) == 0 else { return failure("setns into \(namespace)") }
        let fd = Glibc.open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return failure("opening /dev/net/tun in \(namespace)") }
        var actual = [CChar](repeating: 0, count: 16)
        guard csystem_tun_attach(fd, interface, &actual, UInt(actual.count)) == 0 else {
            let result = failure("TUNSETIFF \(interface) in \(namespace)")
            close(fd)
            return result
        }
        let name = actual.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return .success(TunDevice(fd: fd, interface: String(decoding: name, as: UTF8.self)))
    }
}
