import Foundation
import Glibc

/// The enroll command (`herdr-pair --enroll=ID --state=DIR`, run by sshd as the forced command of the
/// one-time key, with no terminal): reads the device's two lines, claims the pairing, waits for the
/// person's answer, and returns the one token to print (interop-facts §4).
public struct EnrollExchange: Sendable {
    /// How long the device has to send both lines.
    public static let inputTimeout: TimeInterval = 30
    /// How much longer than the approval window the enroll command waits for a verdict before it
    /// answers `EXPIRED` on its own (the foreground answers first; the phone gives up at 180 s).
    public static let verdictMargin: TimeInterval = 15
    /// How often the state directory is looked at while waiting.
    static let pollInterval: TimeInterval = 0.02

    public var pairingIDText: String
    public var statePath: String
    /// Bases the state directory may live under (``StateLocation/acceptedBases(environment:)``).
    public var acceptedBases: [String]
    /// Where the request lines come from (stdin).
    public var input: Int32
    public var inputTimeout: TimeInterval

    public init(
        pairingIDText: String, statePath: String, acceptedBases: [String], input: Int32 = STDIN_FILENO,
        inputTimeout: TimeInterval = EnrollExchange.inputTimeout
    ) {
        self.pairingIDText = pairingIDText
        self.statePath = statePath
        self.acceptedBases = acceptedBases
        self.input = input
        self.inputTimeout = inputTimeout
    }

    /// Runs the exchange. `log` receives a sentence for stderr whenever the outcome is not `OK`.
    public func run(log: (String) -> Void = { _ in }) -> EnrollOutcome {
        guard let id = PairingID(text: pairingIDText) else {
            log("the pairing id is not 22 characters of canonical base64url")
            return .invalid
        }
        let state: PairingStateDirectory
        do throws(PairingStateDirectory.OpenFailure) {
            state = try PairingStateDirectory.open(path: statePath, pairingID: id, acceptedBases: acceptedBases)
        } catch {
            switch error {
            case .missing:
                log("this pairing is over")
                return .expired
            case .rejected(let reason):
                log(reason)
                return .invalid
            }
        }
        let owner = state.owner
        guard Date() < owner.expiresAt, owner.owner.isAlive else {
            log("this pairing code has expired")
            return .expired
        }

        let request: EnrollRequest
        switch readLines() {
        case .complete(let lines):
            do {
                request = try EnrollRequest(keyLine: lines[0], nameLine: lines[1])
            } catch {
                log(error.message)
                return .invalid
            }
        case .needMore:
            log("no request within \(Int(inputTimeout)) s")
            return .invalid
        case .invalid(let reason):
            log(reason)
            return .invalid
        }
        guard request.deviceKey.openSSHString != owner.oneTimeKey else {
            log("the device key is the one-time key")
            return .invalid
        }
        guard Date() < owner.expiresAt, owner.owner.isAlive else {
            log("this pairing code has expired")
            return .expired
        }

        switch Result(catching: { () throws(HostError) in try state.claim(request) }) {
        case .success(.claimed): break
        case .success(.used):
            log("this pairing code was already used")
            return .used
        case .success(.closed):
            log("this pairing is over")
            return .expired
        case .failure(let error):
            log(error.message)
            return .expired
        }

        let deadline = FileIO.monotonicNow() + TimeInterval(owner.approvalWindow) + Self.verdictMargin
        var lastLivenessCheck = FileIO.monotonicNow()
        while true {
            if let verdict = state.verdict() {
                state.acknowledge()
                if verdict != .ok { log(verdict == .denied ? "denied on the computer" : "not approved in time") }
                return verdict
            }
            let now = FileIO.monotonicNow()
            if now >= deadline {
                log("not approved in time")
                return .expired
            }
            if now - lastLivenessCheck >= 0.5 {
                lastLivenessCheck = now
                if !owner.owner.isAlive {
                    // One last look: the helper may have answered just before it exited.
                    if let verdict = state.verdict() {
                        state.acknowledge()
                        return verdict
                    }
                    log("the pairing helper on the computer is gone")
                    return .expired
                }
            }
            FileIO.sleep(seconds: Self.pollInterval)
        }
    }

    /// Reads until both lines are there, input ends, a limit is broken, or ``inputTimeout`` passes.
    private func readLines() -> EnrollLineReader.Result {
        var reader = EnrollLineReader()
        let deadline = FileIO.monotonicNow() + inputTimeout
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let remaining = deadline - FileIO.monotonicNow()
            guard remaining > 0 else { return .needMore }
            var entry = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining, 1) * 1000) + 1)
            if ready < 0 && errno != EINTR {
                return .invalid("cannot read the request: \(String(cString: strerror(errno)))")
            }
            guard ready > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .invalid("cannot read the request: \(String(cString: strerror(errno)))")
            }
            let result = count == 0 ? reader.finish() : reader.append(buffer[..<count])
            if result != .needMore { return result }
        }
    }
}
