import CLISupport
import HerdrKit
import Plumbing
import RelayClient
import RelayProtocol

/// Unpairing a relay host from the device side: the signed delete, then the room secret erased.
enum CompanionRemoval {
    /// Deletes the host's relay room (best effort) and erases its room secret; says what happened.
    static func deleteRoom(of host: HostProfile, secrets: SecretStore) async -> String {
        guard let road = host.companion else { return "nothing to delete" }
        guard let relay = road.relay else {
            try? secrets.setRoomSecret(nil, for: host.id)
            return "it was paired on the home network only, so the computer keeps it until herdr-host unpair there"
        }
        let secret = try? secrets.roomSecret(for: host.id)
        let outcome = await BlockingCall.run { () -> String in
            guard let secret, let key = try? RelayJoinKey(roomSecret: secret),
                let endpoint = try? RelayEndpoint(parsing: relay),
                let computerKey = Base64URL.decodeCanonical(road.computerKey)
            else { return "no room secret was kept, so the relay room was not deleted" }
            let room = RoomName.derive(staticPublicKey: computerKey, pid: road.pairingID)
            do throws(ConnectionError) {
                try RelayHTTPClient(endpoint: endpoint).deleteRoom(room: room, joinKey: key)
                return "the relay room was deleted, so the computer knows the pairing is gone"
            } catch {
                if error.serverError == "not established" {
                    return "the relay room was never established, so there was nothing to delete"
                }
                return "the relay room could not be deleted (\(error.message)); it expires after 30 days unused"
            }
        }
        try? secrets.setRoomSecret(nil, for: host.id)
        return outcome
    }
}
