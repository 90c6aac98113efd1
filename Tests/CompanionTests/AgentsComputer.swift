import CompanionPairing
import EndToEndChannel
import Foundation
import HerdrAgents
import HerdrCrypto
import HerdrKit
import Noise
import NoiseRoads
import RelayClient
import RelayProtocol
import SessionProtocol
import Synchronization
import TestSupport

/// herdr-relay on loopback, its origin the address clients use (it is started twice: once to
/// learn a free port, then on that port).
final class LoopbackRelay {
    let process: RelayProcess
    let origin: String
    var endpoint: RelayEndpoint { get throws { try RelayEndpoint(parsing: origin) } }

    init() throws {
        let first = try RelayProcess(
            ["--listen", "127.0.0.1:0", "--origin", "http://127.0.0.1:1", "--db", ":memory:"],
            environment: ["ATTEST_REQUIRED": "false"])
        let port = first.port
        _ = first.terminate()
        origin = "http://127.0.0.1:\(port)"
        process = try RelayProcess(
            ["--listen", "127.0.0.1:\(port)", "--origin", origin, "--db", ":memory:"],
            environment: ["ATTEST_REQUIRED": "false"])
    }

    deinit { _ = process.terminate() }
}

/// A computer paired with one device, parked at a relay and answering its connections one after
/// another as herdr-host does for the agents family (docs/companion.md, "Agents"), with what
/// the test says: the board it sends when asked (`board`), or none (an older herdr-host); an
/// `open agent` of an agent on that board is started and shows `agent PANE`, any other refused
/// with reason 6. What it was asked is kept for the test (`openedAgents`, `watchRequests`).
final class AgentsComputer: @unchecked Sendable {
    enum Answer: Sendable {
        case board(AgentBoard)
        /// Ignores the watch: a herdr-host older than the agents family.
        case nothing
        /// Changes before any whole board: a broken herdr-host.
        case changesFirst
    }

    struct State {
        var answer: Answer
        var openedAgents: [AgentKey] = []
        var watchRequests: [Bool] = []
        var connections = 0
        var stopped = false
        var current: RelayConnection?
    }

    let relay: RelayEndpoint
    let origin: String
    let computerKey = KeyPair.generate()
    let pairingID = Base64URL.encode(CompanionCode.newPairingID())
    let roomSecret = RelayJoinKey.makeRoomSecret()
    let state: Mutex<State>

    init(relay: LoopbackRelay, answer: Answer) throws {
        self.relay = try relay.endpoint
        origin = relay.origin
        state = Mutex(State(answer: answer))
        let thread = Thread { [self] in serve() }
        thread.name = "agents computer"
        thread.start()
    }

    deinit { stop() }

    func stop() {
        let current = state.withLock { state in
            state.stopped = true
            return state.current
        }
        current?.close()
    }

    var answer: Answer {
        get { state.withLock { $0.answer } }
        set { state.withLock { $0.answer = newValue } }
    }

    var openedAgents: [AgentKey] { state.withLock { $0.openedAgents } }
    var connections: Int { state.withLock { $0.connections } }
    var watchRequests: [Bool] { state.withLock { $0.watchRequests } }

    var pairing: RelayRoad.Pairing {
        RelayRoad.Pairing(
            relay: relay, computerKey: computerKey.publicKey, pairingID: pairingID, roomSecret: roomSecret,
            registered: false)
    }

    /// The roads of a device paired with this computer (relay only), with `key` as its own.
    func roads(deviceKey: KeyPair) -> DeviceRoads {
        var greeting = DeviceRoads.Greeting(
            pairingID: pairingID, computerKey: computerKey.publicKey,
            status: .init(name: "phone", roomSecret: roomSecret, registered: false), staticKey: deviceKey)
        greeting.timeout = 10
        return DeviceRoads(
            greeting: greeting,
            relay: RelayRoad(pairing: pairing, deviceName: "phone", staticKey: deviceKey), home: [])
    }

    /// Saves the computer as the companion host `name` in `directory` (hosts.json, secrets.json,
    /// companion_key), as `herdr-remote pair` would have.
    @MainActor
    func save(as name: String, in directory: ConfigDirectory) throws -> HostProfile {
        _ = try StaticKeyFile.loadOrCreate(directory.companionKeyFile)
        let store = HostStore(directory: directory)
        let profile = HostProfile(
            name: name, hostname: "127.0.0.1", port: Int(relay.port), username: "",
            companion: PairedComputer(
                relay: origin, computerKey: Base64URL.encode(computerKey.publicKey), pairingID: pairingID,
                registered: false, deviceName: "phone"))
        store.upsert(profile)
        try SecretStore(directory: directory).setRoomSecret(roomSecret, for: profile.id)
        return profile
    }

    private func serve() {
        while !state.withLock({ $0.stopped }) {
            let connection: RelayConnection
            do {
                connection = try RelayConnection.connect(
                    to: relay, room: pairing.room, role: .computer,
                    credential: .joinKey(try RelayJoinKey(roomSecret: roomSecret)))
            } catch {
                usleep(20_000)
                continue
            }
            let stopped = state.withLock { state in
                state.current = connection
                return state.stopped
            }
            if stopped { return connection.close() }
            serve(connection)
            connection.close()
        }
    }

    /// One device connection, until it ends.
    private func serve(_ connection: RelayConnection) {
        var channel: FramedChannel?
        var sequence: UInt32 = 1
        while let event = connection.receive(timeout: nil), case .message(let frame) = event {
            if channel == nil {
                guard
                    let handshake = try? CompanionProfile.herdrRemote.responderHandshake(
                        pid: pairingID, localStatic: computerKey)
                else { return }
                channel = FramedChannel(connection: connection, handshake: handshake)
            }
            guard let outputs = try? channel!.receive(frame) else { return }
            for case .message(let bytes) in outputs {
                guard let message = try? ChannelMessage(parsing: bytes) else { return }
                var replies: [[UInt8]] = []
                switch message {
                case .control(.status):
                    state.withLock { $0.connections += 1 }
                    replies = [CompanionMessage.statusAcknowledged.bytes, CompanionMessage.home([]).bytes]
                case .control(.ping(let id)):
                    replies = [CompanionMessage.pong(id).bytes]
                case .control(.agents(let watch)):
                    let answer = state.withLock { state in
                        state.watchRequests.append(watch)
                        return state.answer
                    }
                    guard watch else { break }
                    switch answer {
                    case .board(let board):
                        replies = AgentBoardMessage.full(board, sequence: &sequence).map(ChannelMessage.bytes(of:))
                    case .nothing:
                        break
                    case .changesFirst:
                        replies = [
                            ChannelMessage.bytes(of: AgentBoardMessage(sequence: sequence, kind: .changes, omitted: 1))
                        ]
                        sequence += 1
                    }
                case .session(.openAgent(let stream, let session, let pane, _, _, let window)):
                    let key = AgentKey(session: session, pane: pane)
                    let known = state.withLock { state -> Bool in
                        state.openedAgents.append(key)
                        if case .board(let board) = state.answer { return board.agents[key] != nil }
                        return false
                    }
                    if known {
                        replies = [
                            SessionMessage.started(
                                stream: stream, token: SecureRandom.bytes(16), offset: 0, window: window
                            )
                            .bytes,
                            SessionMessage.output(stream: stream, offset: 0, data: Array("agent \(pane)\r\n".utf8))
                                .bytes,
                        ]
                    } else {
                        replies = [
                            SessionMessage.refused(
                                stream: stream, reason: .unknownAgent,
                                text: "no agent \(pane) in herdr session \(session) on this computer"
                            ).bytes
                        ]
                    }
                default:
                    break
                }
                for reply in replies { try? channel?.send(reply) }
            }
        }
    }

    /// A board of `agents` in herdr's default session.
    static func board(_ agents: [HerdrAgent]) -> AgentBoard {
        AgentBoard(
            herdr: .ready, sessions: [HerdrSessionInfo(name: "default", isDefault: true, state: .ready)], agents: agents
        )
    }

    static func agent(_ pane: String, name: String?, _ status: HerdrAgentStatus) -> HerdrAgent {
        HerdrAgent(
            key: AgentKey(session: "default", pane: pane), name: name, kind: "claude", status: status, since: 1000)
    }
}
