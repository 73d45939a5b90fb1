import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// Packing a real product folder with the real tar: what is packed, where the archive lives, and symbolic links.
@Suite(.timeLimit(.minutes(2))) struct ProductArchiveTests {
    let folder: Folder
    var root: String { folder.path }

    /// A temporary folder removed when the test ends.
    final class Folder: Sendable {
        let path = NSTemporaryDirectory() + "fanout-pack-test-" + UUID().uuidString
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    init() throws {
        folder = Folder()
        try FileManager.default.createDirectory(atPath: folder.path + "/debug/Tests.resources/nested",
                                                withIntermediateDirectories: true)
    }

    /// A product folder: the binary, a resources folder and a library.
    func makeProduct() throws -> TestProduct {
        let dir = root + "/debug"
        try "binary".write(toFile: dir + "/Tests.xctest", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir + "/Tests.xctest")
        try "data".write(toFile: dir + "/Tests.resources/nested/data.json", atomically: true, encoding: .utf8)
        try "lib".write(toFile: dir + "/libThing.so", atomically: true, encoding: .utf8)
        return TestProduct(binary: dir + "/Tests.xctest")
    }

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    @Test func theArchiveIsPrivateInAPrivateFolderAndRemovedAfterwards() async throws {
        let product = try makeProduct()
        let archive = ProductArchive(product: product, scratch: root)
        let packed = try await archive.pack()
        let parent = URL(fileURLWithPath: packed.archive).deletingLastPathComponent().path
        #expect(parent != root, "a folder of its own, not the shared temporary folder")
        #expect(try mode(packed.archive) == 0o600)
        #expect(try mode(parent) == 0o700)
        #expect(packed.files == ["Tests.xctest", "Tests.resources", "libThing.so"])
        await archive.discard()
        #expect(!FileManager.default.fileExists(atPath: parent), "discard removes the folder with the archive")
    }

    @Test func aLinkInsideTheProductIsPackedAsTheFileItPointsTo() async throws {
        let product = try makeProduct()
        try FileManager.default.createSymbolicLink(atPath: root + "/debug/Tests.resources/alias.json",
                                                   withDestinationPath: "nested/data.json")
        try FileManager.default.createSymbolicLink(atPath: root + "/debug/libThing.so.1", withDestinationPath: "libThing.so")
        let archive = ProductArchive(product: product, scratch: root)
        let packed = try await archive.pack()
        let (_, listing, _) = await sh("tar -tvf \(ShellQuote.quote(packed.archive))")
        let alias = listing.split(separator: "\n").first { $0.hasSuffix("Tests.resources/alias.json") }
        #expect(alias?.hasPrefix("-") == true, "a regular file in the archive, not a link: \(listing)")
        #expect(!listing.split(separator: "\n").contains { $0.hasPrefix("l") }, "no link at all: \(listing)")
        await archive.discard()
    }

    @Test func aLinkLeadingOutsideTheProductOrNowhereIsRefusedWithTheReason() async throws {
        let product = try makeProduct()
        try "secret".write(toFile: root + "/outside.txt", atomically: true, encoding: .utf8)
        let link = root + "/debug/Tests.resources/nested/config.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: root + "/outside.txt")
        do {
            _ = try await ProductArchive(product: product, scratch: root).pack()
            Issue.record("a link outside the product folder must be refused")
        } catch {
            let text = "\(error)"
            #expect(text.contains(link) && text.contains("outside the product folder"), "\(text)")
            #expect(text.contains("cp --remove-destination"), "says how to fix it: \(text)")
        }
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "missing.json")
        do {
            _ = try await ProductArchive(product: product, scratch: root).pack()
            Issue.record("a dangling link must be refused")
        } catch {
            #expect("\(error)".contains("does not exist"), "\(error)")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasPrefix("fanout-pack-") }
        #expect(leftovers.isEmpty, "a refused product leaves no archive behind: \(leftovers)")
    }
}
