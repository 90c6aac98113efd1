import Foundation
import HerdrCrypto
import Noise

/// The bytes of a hex literal; a malformed literal is a bug in the test itself.
func hex(_ text: String) -> [UInt8] {
    guard let bytes = Hex.decode(text) else { preconditionFailure("bad hex literal in test: \(text)") }
    return bytes
}

/// Files beside the package: `../shared` (vectors, specs) and this target's `Peers/` scripts,
/// found from this source file's own path, so `swift test` works from any directory.
enum TestFiles {
    /// The directory of this test target's sources.
    static let testDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// `shared/<relative>`: `HERDR_SHARED_DIR` when set, else the first `shared/` found walking up
    /// from this file (the package lives at `<root>/main`, the shared files at `<root>/shared`),
    /// else this target's own copy in `Vectors/` (a checkout on its own, as in a temporary
    /// directory, has no `shared/` above it). `VectorTests` checks the copy against `shared/`
    /// whenever both are there.
    static func shared(_ relative: String) throws -> URL {
        if let override = ProcessInfo.processInfo.environment["HERDR_SHARED_DIR"] {
            return URL(fileURLWithPath: override).appendingPathComponent(relative)
        }
        if let found = sharedAbove(relative) { return found }
        let copy = testDirectory.appendingPathComponent("Vectors").appendingPathComponent(
            URL(fileURLWithPath: relative).lastPathComponent)
        if relative.hasPrefix("vectors/") && FileManager.default.fileExists(atPath: copy.path) { return copy }
        throw TestFileError("shared/\(relative) not found above \(testDirectory.path); set HERDR_SHARED_DIR")
    }

    /// `shared/<relative>` in the first `shared/` walking up from this file, if any.
    static func sharedAbove(_ relative: String) -> URL? {
        var directory = testDirectory
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("shared").appendingPathComponent(relative)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    static func peer(_ name: String) -> URL {
        testDirectory.appendingPathComponent("Peers").appendingPathComponent(name)
    }
}

struct TestFileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs one complete handshake in memory between two states.
func handshake<C: NoiseCipher, H: NoiseHash>(
    _ initiator: inout HandshakeState<C, H>, _ responder: inout HandshakeState<C, H>
) throws {
    while !initiator.isHandshakeComplete || !responder.isHandshakeComplete {
        if initiator.turn == .write {
            _ = try responder.readMessage(initiator.writeMessage())
        } else {
            _ = try initiator.readMessage(responder.writeMessage())
        }
    }
}

/// A fresh pair of XK handshake states with random static keys.
func xkPair<H: NoiseHash>(_ hash: H.Type, prologue: [UInt8] = []) throws -> (
    HandshakeState<CipherChaChaPoly, H>, HandshakeState<CipherChaChaPoly, H>
) {
    let initiatorStatic = KeyPair.generate()
    let responderStatic = KeyPair.generate()
    let initiator = try HandshakeState<CipherChaChaPoly, H>(
        pattern: .xk, initiator: true, prologue: prologue, s: initiatorStatic, rs: responderStatic.publicKey)
    let responder = try HandshakeState<CipherChaChaPoly, H>(
        pattern: .xk, initiator: false, prologue: prologue, s: responderStatic)
    return (initiator, responder)
}
