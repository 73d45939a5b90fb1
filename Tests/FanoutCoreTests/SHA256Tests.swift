import FanoutCore
import Foundation
import Testing

/// The hash selective testing trusts: FIPS 180-4's own examples, every padding boundary, and any split of the input.
@Suite struct SHA256Tests {
    @Test func theStandardsExamples() {
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        var million = SHA256()
        let a = [UInt8](repeating: 0x61, count: 1000)
        for _ in 0..<1000 { million.update(a) }
        #expect(million.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Lengths around the 55/56/64-byte padding edges, checked against coreutils' `sha256sum`.
    @Test func everyPaddingEdgeAgreesWithSha256sum() throws {
        let tool = ["/usr/bin/sha256sum", "/bin/sha256sum"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let sha256sum = try #require(tool, "coreutils' sha256sum is on every Linux machine this runs on")
        for length in [1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sha256sum)
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            input.fileHandleForWriting.write(Data(bytes))
            try input.fileHandleForWriting.close()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let expected = String(decoding: out, as: UTF8.self).split(separator: " ").first.map(String.init)
            var hash = SHA256()
            hash.update(bytes)
            #expect(hash.hex() == expected, "length \(length)")
        }
    }

    @Test func anySplitOfTheInputGivesTheSameDigest() {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var whole = SHA256()
        whole.update(bytes)
        let expected = whole.hex()
        for cut in [0, 1, 63, 64, 65, 128, 299] {
            var split = SHA256()
            split.update(Array(bytes[..<cut]))
            split.update(Array(bytes[cut...]))
            #expect(split.hex() == expected, "cut at \(cut)")
        }
    }
}
