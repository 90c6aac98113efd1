import PairImage

extension FuzzTargets {
    /// `herdr-remote pair --image`'s reader, fed the input as a PNG file's bytes (from memory, as
    /// the file's bytes are once read): anything but a decodable PNG within `maximumPixels` is
    /// refused as not a picture, with a sentence; a decoded picture has one gray byte per pixel,
    /// and zbar's answer (QR texts, maybe none) comes back without a crash.
    static let pairImage = FuzzTarget("pair-image", "herdr-remote pair --image: PNG (libpng) to QR texts (zbar)") {
        data in
        do throws(PairImageError) {
            let image = try PairImageReader.decodePNG(data, name: "fuzz.png")
            FuzzCheck.expect(data.starts(with: PairImageReader.pngSignature), "a picture without the PNG signature")
            FuzzCheck.expect(
                image.width > 0 && image.height > 0 && image.width * image.height <= PairImageReader.maximumPixels,
                "a picture of \(image.width)×\(image.height) pixels")
            FuzzCheck.expect(image.pixels.count == image.width * image.height, "not one byte per pixel")
            _ = try PairImageReader.qrTexts(in: image)
        } catch {
            FuzzCheck.expect(error.kind != .unreadable, "bytes in memory refused as unreadable")
            FuzzCheck.expect(!error.description.isEmpty, "a refusal without a sentence")
        }
    }
}
