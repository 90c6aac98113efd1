import CSystem
import Glibc
import LinkEmulator

/// herdr-link's I/O shell: one epoll loop over the TUN devices, standard input (the control
/// channel), a timerfd armed for the router's next event and a signalfd. The loop and the
/// router it drives run on the main thread only.
struct LinkEventLoop {
    private var router: LinkRouter<SplitMix64>
    private let devices: [TunDevice]
    private let epoll: Int32
    private let timer: Int32
    private let signals: Int32
    private var lines = ControlLineBuffer()
    private var armedFor: Int64 = 0
    private var packetBuffer = [UInt8](repeating: 0, count: 65536)

    /// EPOLL_CTL_ADD (Linux ABI; the macro does not import).
    private static let epollAdd: Int32 = 1

    /// Packets read from one device before the loop turns to the others: fairness under a flood.
    static let packetsPerTurn = 64

    struct LoopError: Error, CustomStringConvertible {
        let description: String
    }

    init(router: LinkRouter<SplitMix64>, devices: [TunDevice], signals: Int32) throws(LoopError) {
        func failure(_ what: String) -> LoopError {
            LoopError(description: "\(what): \(String(cString: strerror(errno)))")
        }
        self.router = router
        self.devices = devices
        self.signals = signals
        epoll = csystem_epoll_create()
        guard epoll >= 0 else { throw failure("epoll_create1") }
        timer = csystem_timerfd_create()
        guard timer >= 0 else { throw failure("timerfd_create") }
        for fd in devices.map(\.fd) + [STDIN_FILENO, timer, signals] {
            guard csystem_epoll_ctl(epoll, Self.epollAdd, fd, csystem_epollin()) == 0 else {
                throw failure("epoll_ctl ADD \(fd)")
            }
        }
    }

    /// Runs until `quit`, the end of standard input or a signal; the error that stopped it otherwise.
    mutating func run() throws(LoopError) {
        var readyFDs = [Int32](repeating: 0, count: 64)
        var readyEvents = [UInt32](repeating: 0, count: 64)
        while true {
            let count = csystem_epoll_wait(epoll, &readyFDs, &readyEvents, Int32(readyFDs.count), -1)
            if count < 0 {
                guard errno == EINTR else {
                    throw LoopError(description: "epoll_wait: \(String(cString: strerror(errno)))")
                }
                continue
            }
            for index in 0..<Int(count) {
                let fd = readyFDs[index]
                if fd == signals { return }
                if fd == STDIN_FILENO {
                    guard try readControl() else { return }
                } else if fd == timer {
                    var expirations: UInt64 = 0
                    _ = read(timer, &expirations, 8)  // EAGAIN when already drained: nothing to do
                } else if let link = devices.firstIndex(where: { $0.fd == fd }) {
                    try readPackets(link: link)
                }
            }
            try deliverDue()
        }
    }

    private mutating func readPackets(link: Int) throws(LoopError) {
        let fd = devices[link].fd
        for _ in 0..<Self.packetsPerTurn {
            let got = packetBuffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EAGAIN || errno == EINTR { return }
                throw LoopError(description: "reading \(devices[link].interface): \(String(cString: strerror(errno)))")
            }
            guard got > 0 else { return }
            router.receive(Array(packetBuffer[0..<got]), fromLink: link, at: csystem_monotonic_nanoseconds())
            // A packet with no delay goes out at once, before the next read.
            try deliverDue()
        }
    }

    /// Writes every packet whose time has come and arms the timer for the next one.
    private mutating func deliverDue() throws(LoopError) {
        let now = csystem_monotonic_nanoseconds()
        for delivery in router.deliveries(dueAt: now) {
            let written = delivery.packet.withUnsafeBytes { write(devices[delivery.link].fd, $0.baseAddress, $0.count) }
            // EIO: the interface is down; EAGAIN: its queue is full. Either way the packet is lost, as on a wire.
            if written != delivery.packet.count {
                router.recordUndeliverable(link: delivery.link, size: delivery.packet.count)
            }
        }
        let next = router.nextEventTime ?? 0
        if next != armedFor {
            guard csystem_timerfd_set_absolute(timer, next) == 0 else {
                throw LoopError(description: "timerfd_settime: \(String(cString: strerror(errno)))")
            }
            armedFor = next
        }
    }

    /// Reads and answers control lines; false at the end of input or on `quit`.
    private mutating func readControl() throws(LoopError) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let got = read(STDIN_FILENO, &chunk, chunk.count)
        if got < 0 {
            if errno == EINTR || errno == EAGAIN { return true }
            throw LoopError(description: "reading the control channel: \(String(cString: strerror(errno)))")
        }
        guard got > 0 else { return false }
        for line in lines.append(chunk[0..<got]) {
            let answer: String
            var quitting = false
            switch line {
            case .tooLong: answer = "error: command longer than \(LinkCommand.maximumLineBytes) bytes"
            case .text(let text):
                do {
                    let command = try LinkCommand(parsing: text)
                    quitting = command == .quit
                    answer = router.execute(command)
                } catch {
                    answer = "error: \(error.description)"
                }
            }
            try reply(answer)
            if quitting { return false }
        }
        return true
    }

    private func reply(_ text: String) throws(LoopError) {
        var bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes {
                write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                throw LoopError(description: "writing an answer: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }
}
