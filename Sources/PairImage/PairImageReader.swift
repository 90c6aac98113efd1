import CLibPNG
import CZBar
import Glibc

/// Reads the QR codes in a PNG picture: libpng's simplified API turns any PNG into 8-bit gray
/// (transparency composed onto white), and zbar, with only its QR reader enabled, finds the codes.
public enum PairImageReader {
    /// The largest picture file read.
    public static let maximumFileBytes = 32 << 20
    /// The most pixels decoded (a 8K screenshot is 33 million).
    public static let maximumPixels = 50_000_000

    /// A picture as one byte of gray per pixel, rows top to bottom.
    public struct GrayImage: Sendable {
        /// Pixels per row.
        public let width: Int
        /// Rows.
        public let height: Int
        /// `width × height` bytes, row by row.
        public let pixels: [UInt8]
    }

    /// The text of every QR code in the PNG at `path`, in zbar's order.
    public static func qrTexts(inFile path: String) throws(PairImageError) -> [String] {
        try qrTexts(inPNG: try readFile(path), name: path)
    }

    /// The text of every QR code in a PNG file's bytes; `name` names the file in errors.
    public static func qrTexts(inPNG bytes: [UInt8], name: String) throws(PairImageError) -> [String] {
        try qrTexts(in: try decodePNG(bytes, name: name))
    }

    // MARK: File

    private static func readFile(_ path: String) throws(PairImageError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw PairImageError(.unreadable, "Cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw PairImageError(.unreadable, "Cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw PairImageError(.unreadable, "\(path) is not a file") }
        guard Int(info.st_size) <= maximumFileBytes else {
            throw PairImageError(
                .notAPicture,
                "\(path) is larger than \(maximumFileBytes >> 20) MiB; use a smaller picture of the QR code")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw PairImageError(.unreadable, "Cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            filled += count
        }
        return Array(bytes.prefix(filled))
    }

    // MARK: PNG

    /// The eight bytes every PNG file starts with.
    public static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Decodes a PNG into 8-bit gray with libpng's simplified API.
    public static func decodePNG(_ bytes: [UInt8], name: String) throws(PairImageError) -> GrayImage {
        guard bytes.starts(with: pngSignature) else {
            throw PairImageError(.notAPicture, "\(name) is not a PNG picture; --image reads PNG files")
        }
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        let begun = bytes.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        guard begun != 0 else {
            let reason = message(of: &image)
            png_image_free(&image)
            throw PairImageError(.notAPicture, "\(name) is not a readable PNG picture: \(reason)")
        }
        let (width, height) = (Int(image.width), Int(image.height))
        guard width > 0, height > 0, width * height <= maximumPixels else {
            png_image_free(&image)
            throw PairImageError(
                .notAPicture, "\(name) is \(width)×\(height) pixels; use a smaller picture of the QR code")
        }
        image.format = UInt32(PNG_FORMAT_GRAY)
        var pixels = [UInt8](repeating: 0, count: width * height)
        // Transparent pixels become white, the background a QR code is printed on.
        var white = png_color(red: 255, green: 255, blue: 255)
        let finished = pixels.withUnsafeMutableBytes { buffer in
            png_image_finish_read(&image, &white, buffer.baseAddress, Int32(width), nil)
        }
        guard finished != 0 else {
            let reason = message(of: &image)
            png_image_free(&image)
            throw PairImageError(.notAPicture, "\(name) could not be decoded: \(reason)")
        }
        png_image_free(&image)
        return GrayImage(width: width, height: height, pixels: pixels)
    }

    /// libpng's error text, kept in the image's fixed 64-byte buffer.
    private static func message(of image: inout png_image) -> String {
        withUnsafeBytes(of: &image.message) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? "unknown error" : String(decoding: bytes, as: UTF8.self)
        }
    }

    // MARK: zbar

    /// `Y800`: one byte of gray per pixel (zbar_fourcc does not import: it is a macro).
    static let grayFourCC: UInt =
        UInt(UInt8(ascii: "Y")) | UInt(UInt8(ascii: "8")) << 8 | UInt(UInt8(ascii: "0")) << 16
        | UInt(UInt8(ascii: "0")) << 24

    /// The text of every QR code zbar finds in the picture.
    public static func qrTexts(in image: GrayImage) throws(PairImageError) -> [String] {
        guard let scanner = zbar_image_scanner_create() else { throw PairImageError(.decoder, "zbar could not start") }
        defer { zbar_image_scanner_destroy(scanner) }
        // Only QR codes: a stray barcode elsewhere in a screenshot is not an answer.
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        // The bytes as encoded: zbar's charset guessing would turn UTF-8 into Shift JIS look-alikes.
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        guard let zimage = zbar_image_create() else { throw PairImageError(.decoder, "zbar could not start") }
        defer { zbar_image_destroy(zimage) }
        zbar_image_set_format(zimage, grayFourCC)
        zbar_image_set_size(zimage, UInt32(image.width), UInt32(image.height))
        return image.pixels.withUnsafeBytes { raw in
            // No cleanup handler: the pixels stay ours, and are detached before they go away.
            zbar_image_set_data(zimage, raw.baseAddress, UInt(raw.count), nil)
            defer { zbar_image_set_data(zimage, nil, 0, nil) }
            guard zbar_scan_image(scanner, zimage) > 0 else { return [] }
            var texts: [String] = []
            var symbol = zbar_image_first_symbol(zimage)
            while let current = symbol {
                if zbar_symbol_get_type(current) == ZBAR_QRCODE, let data = zbar_symbol_get_data(current) {
                    let length = Int(zbar_symbol_get_data_length(current))
                    texts.append(String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self))
                }
                symbol = zbar_symbol_next(current)
            }
            return texts
        }
    }
}
