import FanoutCore
import Foundation

/// The identity of a test product across runs: the SHA-256 of its test binary. Two runs of one product that give a
/// test both verdicts are the evidence of a flake (FanoutCore's `FlakeScore`).
public enum ProductDigest {
    /// The SHA-256 of `product`'s binary, in hex; nil for an Apple product (an `.xctestrun` file names the build, it
    /// is not the build; an `.xctest` folder has no one file) or when the binary cannot be read.
    public static func sha256(of product: TestProduct) async -> String? {
        var isFolder: ObjCBool = false
        guard !product.binary.hasSuffix(".xctestrun"),
              FileManager.default.fileExists(atPath: product.binary, isDirectory: &isFolder), !isFolder.boolValue
        else { return nil }
        let (ending, out, _) = await LocalTransport(slots: 1).capture(Tools.sha256(product.binary), timeout: 300)
        guard ending == .exited(0), let sha = String(decoding: out, as: UTF8.self).split(separator: " ").first,
              sha.count == 64, sha.allSatisfy(\.isHexDigit) else { return nil }
        return String(sha)
    }
}
