import CLibSSH2
import Glibc
import HerdrCrypto

/// State the libssh2 C callbacks reach through the session's `abstract` pointer.
/// All callbacks run on the connection's own thread, inside libssh2 calls made there.
final class SSHCallbackContext {
    let credentials: SSHCredentials
    /// "user@host", for prompts.
    let target: String
    /// When the socket last delivered bytes; drives the keepalive verdict.
    var lastReceive = Monotonic.now
    private(set) var responderGaveUp = false
    private var passwordOffered = false
    private var rounds = 0

    init(credentials: SSHCredentials, target: String) {
        self.credentials = credentials
        self.target = target
    }

    func beginKeyboardInteractive() {
        responderGaveUp = false
        rounds = 0
    }

    /// Answers one keyboard-interactive round: the stored password for the first hidden prompt
    /// (once per connection), the responder for everything else.
    func answer(_ challenge: KeyboardInteractiveChallenge) -> [String] {
        rounds += 1
        // A server that keeps asking forever gets empty answers and fails the method.
        guard rounds <= 10, !challenge.prompts.isEmpty else { return challenge.prompts.map { _ in "" } }
        if let password = credentials.password, !passwordOffered, challenge.prompts.count == 1,
            !challenge.prompts[0].echo
        {
            passwordOffered = true
            return [password]
        }
        guard let responder = credentials.responder, let answers = responder(challenge),
            answers.count == challenge.prompts.count
        else {
            responderGaveUp = true
            return challenge.prompts.map { _ in "" }
        }
        return answers
    }

    static func from(_ abstract: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> SSHCallbackContext? {
        guard let pointer = abstract?.pointee else { return nil }
        return Unmanaged<SSHCallbackContext>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// recv(2) for libssh2 that also notes when bytes last arrived. Returns -errno on failure as libssh2 expects.
let countingReceive:
    @convention(c) (
        libssh2_socket_t, UnsafeMutableRawPointer?, Int, Int32, UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> Int =
        { fd, buffer, length, flags, abstract in
            let n = recv(fd, buffer, length, flags)
            if n < 0 { return -Int(errno) }
            if n > 0 { SSHCallbackContext.from(abstract)?.lastReceive = Monotonic.now }
            return n
        }

/// Signs the userauth request with the device's Ed25519 key; libssh2 frees the result with free(3).
let ed25519Sign:
    @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, UnsafeMutablePointer<Int>?,
        UnsafePointer<UInt8>?, Int,
        UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> Int32 = { _, signatureOut, lengthOut, data, dataLength, abstract in
        guard let context = SSHCallbackContext.from(abstract), let key = context.credentials.privateKey, let data,
            let signatureOut, let lengthOut
        else { return -1 }
        guard let signature = try? key.signature(for: [UInt8](UnsafeBufferPointer(start: data, count: dataLength))),
            let out = malloc(signature.count)?.assumingMemoryBound(to: UInt8.self)
        else { return -1 }
        out.initialize(from: signature, count: signature.count)
        signatureOut.pointee = out
        lengthOut.pointee = signature.count
        return 0
    }

/// Copies a keyboard-interactive round into Swift, asks the context, and hands libssh2 malloc'ed answers.
let keyboardInteractiveResponse:
    @convention(c) (
        UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, Int32, Int32,
        UnsafePointer<LIBSSH2_USERAUTH_KBDINT_PROMPT>?,
        UnsafeMutablePointer<LIBSSH2_USERAUTH_KBDINT_RESPONSE>?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> Void = { name, nameLength, instruction, instructionLength, count, prompts, responses, abstract in
        guard let context = SSHCallbackContext.from(abstract), let responses, count > 0, let prompts else { return }
        func text(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> String {
            guard let pointer, length > 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
        }
        let challenge = KeyboardInteractiveChallenge(
            name: text(name, Int(nameLength)), instruction: text(instruction, Int(instructionLength)),
            prompts: (0..<Int(count)).map { index in
                let prompt = prompts[index]
                let body = prompt.text.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
                return .init(text: text(body, Int(prompt.length)), echo: prompt.echo != 0)
            })
        let answers = context.answer(challenge)
        for index in 0..<Int(count) {
            let answer = Array((index < answers.count ? answers[index] : "").utf8)
            guard let copy = malloc(max(answer.count, 1))?.assumingMemoryBound(to: CChar.self) else { continue }
            answer.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) {
                    if let base = $0.baseAddress { copy.initialize(from: base, count: answer.count) }
                }
            }
            responses[index].text = copy
            responses[index].length = UInt32(answer.count)
        }
    }
