import COpenSSL
import Glibc

/// The ChaCha20-Poly1305 AEAD of RFC 8439 (IETF variant: 256-bit key, 96-bit nonce, 128-bit tag)
/// over one reusable `EVP_CIPHER_CTX`.
///
/// Messages of up to `compactLimit` bytes are sealed and opened by this module's own `ChaCha20`
/// and `Poly1305`: a keystroke's message costs OpenSSL's EVP path about 30 µs when the process
/// wakes from a sleep (2.7 µs in a tight loop), almost all of it the provider's dispatch code and
/// data gone cold; the compact path is a few hundred bytes of code. Longer messages go to
/// OpenSSL, whose vector code is several times faster per byte. Both give the same bytes
/// (`ChaCha20Poly1305Tests` compares them on random inputs).
///
/// The context is keyed once in `init`; each `seal`/`open` only sets the nonce and direction, so
/// the hot path allocates nothing when the caller provides the output buffer. `seal` and `open`
/// work in place (output at the same address as the input). Not thread-safe: the context is
/// scratch state, so one instance belongs to one caller at a time.
public final class ChaCha20Poly1305 {
    public static let keySize = 32
    public static let nonceSize = 12
    public static let tagSize = 16
    /// The longest plaintext the compact path handles.
    package static let compactLimit = 1024

    private let context: OpaquePointer
    /// The key, for the compact path; cleansed when the instance goes.
    private let key: UnsafeMutableRawPointer
    /// Which path a message takes; tests pin one to compare them. A constant, so reading it
    /// costs no exclusivity check.
    package let engine: Engine

    package enum Engine {
        /// The compact path up to `compactLimit` bytes, OpenSSL beyond.
        case bySize
        case openSSL
        case compact
    }

    /// How many contexts the calling thread has made: a test's check that a channel keeps its
    /// contexts (one made per message costs a keystroke tens of microseconds, cold).
    public static var contextsMadeOnThisThread: Int { Int(bitPattern: pthread_getspecific(madeKey)) }

    private static let madeKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    public convenience init(key: [UInt8]) throws(CryptoError) {
        try self.init(key: key, engine: .bySize)
    }

    package init(key: [UInt8], engine: Engine) throws(CryptoError) {
        guard key.count == Self.keySize else {
            throw CryptoError(.invalidKey, "ChaCha20-Poly1305 key must be 32 bytes, got \(key.count)")
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        self.context = context
        self.engine = engine
        self.key = UnsafeMutableRawPointer.allocate(byteCount: Self.keySize, alignment: 8)
        key.withUnsafeBytes { self.key.copyMemory(from: $0.baseAddress!, byteCount: Self.keySize) }
        _ = pthread_setspecific(Self.madeKey, UnsafeRawPointer(bitPattern: Self.contextsMadeOnThisThread + 1))
        let status = key.withUnsafeBufferPointer {
            EVP_CipherInit_ex2(context, FetchedCipher.chaCha20Poly1305.pointer, $0.baseAddress, nil, 1, nil)
        }
        guard status == 1 else {
            EVP_CIPHER_CTX_free(context)
            OPENSSL_cleanse(self.key, Self.keySize)
            self.key.deallocate()
            throw CryptoError.openSSL("EVP_CipherInit_ex2(ChaCha20-Poly1305)")
        }
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
        OPENSSL_cleanse(key, Self.keySize)
        key.deallocate()
    }

    /// Encrypts `plaintext` and authenticates it with `ad`, writing the ciphertext followed by the
    /// 16-byte tag into `output` (at least `plaintext.count + 16` bytes). Returns the bytes written.
    @discardableResult
    public func seal(
        nonce: UnsafeRawBufferPointer, authenticating ad: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try seal(nonce: nonce, authenticating: ad, header: Self.empty, plaintext: plaintext, into: output)
    }

    /// Seals the plaintext `header ‖ plaintext` without the caller joining the two: output is
    /// ciphertext ‖ tag, `header.count + plaintext.count + 16` bytes. `plaintext` may already sit
    /// in place at `output[header.count...]`; otherwise the buffers must not overlap.
    @discardableResult
    public func seal(
        nonce: UnsafeRawBufferPointer, authenticating ad: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer,
        plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        let length = header.count + plaintext.count
        let total = length + Self.tagSize
        guard output.count >= total else {
            throw CryptoError(.invalidInput, "ChaCha20-Poly1305 output needs \(total) bytes, got \(output.count)")
        }
        if usesCompactPath(length) {
            let stream = try compactStream(nonce: nonce)
            var mac = Self.authenticator(stream, ad: ad)
            let out = output.baseAddress!
            stream.apply(
                header.baseAddress ?? UnsafeRawPointer(out), count: header.count, into: out, counter: 1, offset: 0)
            stream.apply(
                plaintext.baseAddress ?? UnsafeRawPointer(out), count: plaintext.count, into: out + header.count,
                counter: 1,
                offset: header.count)
            mac.absorbPadded(out, count: length)
            mac.absorbBlock(UInt64(ad.count), UInt64(length))
            mac.finish(into: out + length)
            return total
        }
        try start(nonce: nonce, encrypting: true, ad: ad)
        let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
        try update(header, into: out)
        try update(plaintext, into: out + header.count)
        var finalLength: Int32 = 0
        guard EVP_CipherFinal_ex(context, out + length, &finalLength) == 1, finalLength == 0 else {
            throw CryptoError.openSSL("EVP_CipherFinal_ex(ChaCha20-Poly1305 seal)")
        }
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagSize), out + length) == 1 else {
            throw CryptoError.openSSL("EVP_CIPHER_CTX_ctrl(AEAD_GET_TAG)")
        }
        return total
    }

    /// Checks and decrypts `ciphertext` (ciphertext followed by the 16-byte tag) authenticated with
    /// `ad`, writing the plaintext into `output` (at least `ciphertext.count - 16` bytes). Returns
    /// the bytes written. On an authentication failure the output is zeroed, so no unauthenticated
    /// plaintext is ever left behind, and the error kind is `.authenticationFailed`.
    @discardableResult
    public func open(
        nonce: UnsafeRawBufferPointer, authenticating ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try open(
            nonce: nonce, authenticating: ad, ciphertext: ciphertext,
            header: UnsafeMutableRawBufferPointer(start: nil, count: 0), into: output)
    }

    /// Opens into two places: the plaintext's first `header.count` bytes go to `header` and the
    /// rest to `output`, so a caller can strip a fixed prefix without moving the rest. Returns the
    /// whole plaintext's length (`ciphertext.count - 16`); when that is shorter than `header`, only
    /// that much of `header` is written. `output` may start at `ciphertext`'s address plus
    /// `header.count` (in place); otherwise the buffers must not overlap. On an authentication
    /// failure both are zeroed.
    @discardableResult
    public func open(
        nonce: UnsafeRawBufferPointer, authenticating ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        header: UnsafeMutableRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        guard ciphertext.count >= Self.tagSize else {
            throw CryptoError(.authenticationFailed, "ChaCha20-Poly1305 ciphertext shorter than its 16-byte tag")
        }
        let length = ciphertext.count - Self.tagSize
        let headerLength = min(header.count, length)
        guard output.count >= length - headerLength else {
            throw CryptoError(
                .invalidInput, "ChaCha20-Poly1305 output needs \(length - headerLength) bytes, got \(output.count)")
        }
        if usesCompactPath(length) {
            // The tag is checked before anything is written, so nothing unauthenticated is ever out.
            let stream = try compactStream(nonce: nonce)
            var mac = Self.authenticator(stream, ad: ad)
            let sealed = ciphertext.baseAddress!
            mac.absorbPadded(sealed, count: length)
            mac.absorbBlock(UInt64(ad.count), UInt64(length))
            var expected: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &expected) { mac.finish(into: $0.baseAddress!) }
            let difference =
                (expected.0 ^ sealed.loadUnaligned(fromByteOffset: length, as: UInt64.self))
                | (expected.1 ^ sealed.loadUnaligned(fromByteOffset: length + 8, as: UInt64.self))
            guard difference == 0 else {
                zero(header: header, headerLength, output: output, length - headerLength)
                throw CryptoError(.authenticationFailed, "ChaCha20-Poly1305 authentication failed")
            }
            if headerLength > 0 {
                stream.apply(sealed, count: headerLength, into: header.baseAddress!, counter: 1, offset: 0)
            }
            if length > headerLength {
                stream.apply(
                    sealed + headerLength, count: length - headerLength, into: output.baseAddress!, counter: 1,
                    offset: headerLength)
            }
            return length
        }
        try start(nonce: nonce, encrypting: false, ad: ad)
        // The tag is copied out first: when opening in place, the plaintext overwrites the input.
        var tag: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &tag) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: ciphertext[length...]))
        }
        let tagStatus = withUnsafeMutableBytes(of: &tag) {
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagSize), $0.baseAddress)
        }
        guard tagStatus == 1 else { throw CryptoError.openSSL("EVP_CIPHER_CTX_ctrl(AEAD_SET_TAG)") }
        if headerLength > 0 {
            try update(
                UnsafeRawBufferPointer(rebasing: ciphertext[..<headerLength]),
                into: header.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        if length > headerLength {
            try update(
                UnsafeRawBufferPointer(rebasing: ciphertext[headerLength..<length]),
                into: output.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        // The AEAD writes nothing at the end; its output pointer still has to be valid.
        var finalLength: Int32 = 0
        var scratch: UInt64 = 0
        let verified = withUnsafeMutableBytes(of: &scratch) {
            EVP_CipherFinal_ex(context, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), &finalLength) == 1
        }
        guard verified else {
            ERR_clear_error()
            zero(header: header, headerLength, output: output, length - headerLength)
            throw CryptoError(.authenticationFailed, "ChaCha20-Poly1305 authentication failed")
        }
        return length
    }

    private static var empty: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    private func usesCompactPath(_ length: Int) -> Bool {
        switch engine {
        case .bySize: length <= Self.compactLimit
        case .openSSL: false
        case .compact: true
        }
    }

    private func compactStream(nonce: UnsafeRawBufferPointer) throws(CryptoError) -> ChaCha20 {
        guard nonce.count == Self.nonceSize else {
            throw CryptoError(.invalidInput, "ChaCha20-Poly1305 nonce must be 12 bytes, got \(nonce.count)")
        }
        return ChaCha20(key: key, nonce: nonce.baseAddress!)
    }

    /// The message's Poly1305, keyed by the stream's block 0 (RFC 8439 section 2.6), with the
    /// associated data absorbed.
    private static func authenticator(_ stream: ChaCha20, ad: UnsafeRawBufferPointer) -> Poly1305 {
        var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        var mac = withUnsafeMutableBytes(of: &block) { block in
            stream.block(counter: 0, into: block.baseAddress!)
            defer { OPENSSL_cleanse(block.baseAddress, block.count) }
            return Poly1305(key: block.baseAddress!)
        }
        mac.absorbPadded(ad.baseAddress, count: ad.count)
        return mac
    }

    private func zero(
        header: UnsafeMutableRawBufferPointer, _ headerLength: Int, output: UnsafeMutableRawBufferPointer, _ rest: Int
    ) {
        if headerLength > 0 {
            UnsafeMutableRawBufferPointer(rebasing: header[..<headerLength]).initializeMemory(
                as: UInt8.self, repeating: 0)
        }
        if rest > 0 {
            UnsafeMutableRawBufferPointer(rebasing: output[..<rest]).initializeMemory(as: UInt8.self, repeating: 0)
        }
    }

    /// Sets the nonce and direction, then feeds the associated data.
    private func start(nonce: UnsafeRawBufferPointer, encrypting: Bool, ad: UnsafeRawBufferPointer) throws(CryptoError)
    {
        guard nonce.count == Self.nonceSize else {
            throw CryptoError(.invalidInput, "ChaCha20-Poly1305 nonce must be 12 bytes, got \(nonce.count)")
        }
        let nonceBytes = nonce.baseAddress!.assumingMemoryBound(to: UInt8.self)
        guard EVP_CipherInit_ex2(context, nil, nil, nonceBytes, encrypting ? 1 : 0, nil) == 1 else {
            throw CryptoError.openSSL("EVP_CipherInit_ex2(ChaCha20-Poly1305 nonce)")
        }
        if !ad.isEmpty {
            var written: Int32 = 0
            let adBytes = ad.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard EVP_CipherUpdate(context, nil, &written, adBytes, Int32(ad.count)) == 1 else {
                throw CryptoError.openSSL("EVP_CipherUpdate(ChaCha20-Poly1305 AAD)")
            }
        }
    }

    private func update(_ input: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) throws(CryptoError) {
        guard !input.isEmpty else { return }
        guard input.count <= Int(Int32.max) else {
            throw CryptoError(.invalidInput, "ChaCha20-Poly1305 input of \(input.count) bytes is too large")
        }
        var written: Int32 = 0
        let inBytes = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
        guard EVP_CipherUpdate(context, out, &written, inBytes, Int32(input.count)) == 1, Int(written) == input.count
        else {
            throw CryptoError.openSSL("EVP_CipherUpdate(ChaCha20-Poly1305)")
        }
    }
}

extension ChaCha20Poly1305 {
    /// Seals `plaintext` under a 12-byte `nonce`, returning ciphertext ‖ tag.
    public func seal(nonce: [UInt8], authenticating ad: [UInt8] = [], plaintext: [UInt8]) throws(CryptoError) -> [UInt8]
    {
        var output = [UInt8](repeating: 0, count: plaintext.count + Self.tagSize)
        try nonce.withBytes { n throws(CryptoError) in
            try ad.withBytes { a throws(CryptoError) in
                try plaintext.withBytes { p throws(CryptoError) in
                    try output.withMutableBytes { o throws(CryptoError) in
                        _ = try seal(nonce: n, authenticating: a, plaintext: p, into: o)
                    }
                }
            }
        }
        return output
    }

    /// Opens ciphertext ‖ tag under a 12-byte `nonce`, returning the plaintext.
    public func open(nonce: [UInt8], authenticating ad: [UInt8] = [], ciphertext: [UInt8]) throws(CryptoError)
        -> [UInt8]
    {
        var output = [UInt8](repeating: 0, count: max(ciphertext.count - Self.tagSize, 0))
        try nonce.withBytes { n throws(CryptoError) in
            try ad.withBytes { a throws(CryptoError) in
                try ciphertext.withBytes { c throws(CryptoError) in
                    try output.withMutableBytes { o throws(CryptoError) in
                        _ = try open(nonce: n, authenticating: a, ciphertext: c, into: o)
                    }
                }
            }
        }
        return output
    }

    /// Calls `body` with the 12-byte nonce Noise uses for counter `n` (Noise section 12.3): four
    /// zero bytes, then `n` as a little-endian 64-bit integer. Built on the stack.
    @inlinable
    public static func withNoiseNonce<R, E: Error>(
        _ n: UInt64, _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        var words: (UInt32, UInt32, UInt32) = (0, 0, 0)
        return try withUnsafeMutableBytes(of: &words) { bytes throws(E) in
            bytes.storeBytes(of: n.littleEndian, toByteOffset: 4, as: UInt64.self)
            return try body(UnsafeRawBufferPointer(bytes))
        }
    }

    /// The 12-byte nonce Noise uses for counter `n`, as an array.
    public static func noiseNonce(_ n: UInt64) -> [UInt8] {
        withNoiseNonce(n) { Array($0) }
    }
}

/// The `EVP_CIPHER` for ChaCha20-Poly1305, fetched once for the life of the process.
final class FetchedCipher: @unchecked Sendable {
    static let chaCha20Poly1305 = FetchedCipher("ChaCha20-Poly1305")

    let pointer: OpaquePointer

    private init(_ name: String) {
        guard let cipher = EVP_CIPHER_fetch(nil, name, nil) else {
            preconditionFailure("\(CryptoError.openSSL("EVP_CIPHER_fetch(\(name))"))")
        }
        pointer = cipher
    }

    deinit { EVP_CIPHER_free(pointer) }
}
