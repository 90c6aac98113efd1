import Companion
import Foundation
import NetworkPath
import RelayClient

/// The computer's side of liveness (docs/companion.md, "Liveness"): every established channel,
/// on either road, is pinged after 10 s of hearing nothing from its device and dropped 15 s later
/// if still nothing came, so a device whose network died without a word does not hold its
/// sessions past their grace period, which counts from the last thing heard.
extension HostAgent {
    /// A ping after 10 s of silence; the channel dropped after 15 s more.
    static let deviceLiveness: PathLiveness.Settings = {
        var settings = PathLiveness.Settings()
        settings.idlePing = 10
        settings.minimumSilence = 15
        return settings
    }()

    /// `channel`'s handshake completed: its device is heard from now.
    func channelEstablished(_ channel: Int, _ loop: Loop) {
        loop.liveness[channel] = PathLiveness(settings: Self.deviceLiveness, now: MonotonicClock.now)
    }

    /// When `channel` last heard from its device, if it was established.
    func lastHeard(on channel: Int, _ loop: Loop) -> Double? { loop.liveness[channel]?.lastHeard }

    /// Pings the channels that have been quiet, drops those that stayed so; forgets ended ones.
    func checkLiveness(_ loop: Loop) {
        let now = MonotonicClock.now
        let open = Set(loop.homeLinks.keys).union(loop.slots.values.compactMap(\.channelID))
        for channel in Array(loop.liveness.keys) {
            guard open.contains(channel) else {
                loop.liveness[channel] = nil
                continue
            }
            switch loop.liveness[channel]?.tick(now: now) {
            case .ping(let id):
                send(CompanionMessage.ping(id).bytes, on: channel, loop)
            case .suspect(let silentFor):
                drop(channel, why: "heard nothing for \(Int(silentFor)) s; its sessions wait for it", loop)
            case nil:
                break
            }
        }
        for channel in Array(loop.agentFeeds.keys) where !open.contains(channel) { forgetWatch(on: channel, loop) }
    }
}
