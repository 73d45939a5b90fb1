import FanoutAgents
import FanoutCore
import FanoutRunners
import Foundation

/// Builds a package's tests (`swift build --build-tests`) and finds the test product, or checks a given bundle.
public struct ProductBuilder: Sendable {
    public let settings: RunSettings
    private let shell = LocalShell("build")

    public init(settings: RunSettings) {
        self.settings = settings
    }

    /// The product to test: the given `--bundle`, or the result of building the package.
    public func product(progress: ProgressHandler) async throws(FanoutError) -> TestProduct {
        if let bundle = settings.bundlePath { return try Self.checkBundle(bundle) }
        let (package, swift) = try Self.packageAndSwift(settings.packagePath)
        var args = ["build", "--build-tests", "--package-path", package, "-c", settings.configuration]
        if let scratch = settings.scratchPath { args += ["--scratch-path", scratch] }
        args += settings.buildFlags
        progress(.phase("building \(package) (\(settings.configuration))"))
        // The folder of the products is asked at once with the build: `--show-bin-path` reads the settings, not the
        // package graph, and takes no build lock, so it answers while the build runs (0.2 s of a SwiftPM start, which
        // after the build made a no-op build of `--package` cost half as much again as `swift build` itself).
        async let binPath = shell.capture(Command(executable: swift, arguments: args + ["--show-bin-path"]))
        let (ending, out, err) = await shell.capture(Command(executable: swift, arguments: args))
        let (pathEnding, pathOut, pathErr) = await binPath
        guard case .exited(0) = ending else {
            let text = String(decoding: out + err, as: UTF8.self)
            var errors = text.split(separator: "\n").filter { $0.contains("error:") }.map(String.init)
            if errors.isEmpty { errors = text.split(separator: "\n").suffix(20).map(String.init) }
            throw FanoutError("the build failed (\(ending)): swift \(ShellQuote.join(args))",
                              hint: "Fix the errors above, or run the same command by hand to see its whole output.",
                              details: Array(errors.prefix(30)))
        }
        let bin = String(decoding: pathOut, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard case .exited(0) = pathEnding, !bin.isEmpty else {
            throw FanoutError("swift build --show-bin-path failed: \(String(decoding: pathErr, as: UTF8.self))",
                              exitCode: .infrastructure)
        }
        let candidates = ((try? FileManager.default.contentsOfDirectory(atPath: bin)) ?? [])
            .filter { $0.hasSuffix("PackageTests.xctest") }.sorted()
        guard let name = candidates.first else {
            throw FanoutError("the build made no test product in \(bin)",
                              hint: "Does the package have test targets? `swift build --build-tests` links them into <Package>PackageTests.xctest.")
        }
        return TestProduct(binary: bin + "/" + name)
    }

    /// A bundle must exist and be an executable file, or be an `.xctestrun` file.
    public static func checkBundle(_ path: String) throws(FanoutError) -> TestProduct {
        let full = URL(fileURLWithPath: path).standardizedFileURL.path
        if full.hasSuffix(".xctestrun") { return try checkTestRun(full) }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: full, isDirectory: &isDir) else {
            throw FanoutError("no test product at \(full)",
                              hint: "Give the path of a built <Package>PackageTests.xctest (see `swift build --build-tests --show-bin-path`).")
        }
        guard !isDir.boolValue, FileManager.default.isExecutableFile(atPath: full) else {
            throw FanoutError("\(full) is not an executable test product",
                              hint: "On Linux the product is the executable file <Package>PackageTests.xctest.")
        }
        return TestProduct(binary: full)
    }

    /// An `.xctestrun` and the folders it names travel to agents. A file with absolute paths into its own folder
    /// is relocated first (to `.<name>.fanout.xctestrun` beside it), since agents unpack the folder elsewhere.
    static func checkTestRun(_ path: String) throws(FanoutError) -> TestProduct {
        let hint = "Give the .xctestrun that `xcodebuild build-for-testing` wrote into Build/Products (see docs/apple-platforms.md)."
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FanoutError("cannot read the test product \(path)", hint: hint)
        }
        let product = TestProduct(binary: path)
        let file: XCTestRunFile
        var binary = path
        do {
            file = try XCTestRunFile.parse(data)
            if let moved = try XCTestRunFile.relocated(data, productFolder: product.directory) {
                let name = URL(fileURLWithPath: path).lastPathComponent
                binary = product.directory + "/." + name.dropLast(".xctestrun".count) + ".fanout.xctestrun"
                if FileManager.default.contents(atPath: binary) != moved {
                    guard FileManager.default.createFile(atPath: binary, contents: moved) else {
                        throw FanoutError("cannot write \(binary), the relocated copy of \(path)",
                                          hint: "Make the product folder writable.")
                    }
                }
            }
        } catch let error as XCTestRunFile.Failure {
            throw FanoutError("\(path) is not a readable .xctestrun: \(error)", hint: hint)
        } catch let error as FanoutError {
            throw error
        } catch {
            throw FanoutError("\(path): \(error)", hint: hint)
        }
        for folder in file.folders where !FileManager.default.fileExists(atPath: product.directory + "/" + folder) {
            throw FanoutError("\(path) refers to \(folder), which is not in \(product.directory)", hint: hint)
        }
        return TestProduct(binary: binary, members: file.folders)
    }

    /// The package's absolute folder, which must hold a Package.swift, and the `swift` command on PATH.
    static func packageAndSwift(_ path: String) throws(FanoutError) -> (package: String, swift: String) {
        let package = URL(fileURLWithPath: path).standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: package + "/Package.swift") else {
            throw FanoutError("no Swift package at \(package) (no Package.swift there)",
                              hint: "Point --package at the folder with Package.swift, or give a built product with --bundle PATH.")
        }
        guard let swift = findSwift() else {
            throw FanoutError("cannot find the `swift` command on PATH", hint: "Install a Swift toolchain or use --bundle PATH.",
                              exitCode: .infrastructure)
        }
        return (package, swift)
    }

    static func findSwift() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/swift"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
