import EndToEndChannel
import Foundation
import Noise
import Plumbing
import RelayClient
import SessionProtocol

/// The device's first steps on any pipe to its computer: a fresh XK handshake with the pinned
/// computer key, the status with the room secret, the computer's ack, and what the computer
/// serves (`{"serves"}` before the ack; nothing from an older computer). Shared by the relay road
/// and the home road.
func greet(
    over pipe: any FramePipe, pairingID: String, computerKey: [UInt8], status: CompanionMessage.DeviceStatus,
    staticKey: KeyPair, timeout: Double, classify: (FramePipeEnd) -> RoadFailure
) throws(RoadFailure) -> (channel: FramedChannel, served: [String: Int]) {
    let handshake: CompanionHandshake
    do {
        handshake = try CompanionProfile.herdrRemote.initiatorHandshake(
            pid: pairingID, localStatic: staticKey, remoteStatic: computerKey)
    } catch {
        throw .unavailable("cannot start the handshake: \(error)")
    }
    var channel = FramedChannel(connection: pipe, handshake: handshake)
    let deadline = Date().addingTimeInterval(timeout)
    func next() throws(RoadFailure) -> [FramedChannel.Output] {
        let left = deadline.timeIntervalSinceNow
        guard left > 0, let event = pipe.receive(timeout: left) else {
            throw .unavailable("the computer did not answer in time")
        }
        switch event {
        case .message(let frame):
            do {
                return try channel.receive(frame)
            } catch {
                throw .unavailable("\(error)")
            }
        case .ended(let end):
            throw classify(end)
        }
    }
    do {
        _ = try channel.start()
    } catch {
        throw .unavailable("\(error)")
    }
    while !channel.isEstablished { _ = try next() }
    do {
        try channel.send(CompanionMessage.status(status).bytes)
    } catch {
        throw .unavailable("\(error)")
    }
    var acknowledged = false
    var served: [String: Int] = [:]
    while !acknowledged {
        for output in try next() {
            guard case .message(let bytes) = output else { continue }
            let message: ChannelMessage
            do {
                message = try ChannelMessage(parsing: bytes)
            } catch {
                throw .unavailable("the computer sent \(error)")
            }
            switch message {
            case .control(.statusAcknowledged): acknowledged = true
            case .control(.serves(let things)): served = things
            case .control: continue
            case .session, .agents:
                throw .unavailable("the computer sent a session message before it acknowledged the status")
            }
        }
    }
    return (channel, served)
}
