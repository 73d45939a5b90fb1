import FanoutAgents
import FanoutCore
import Foundation

/// A package's targets and what each depends on, as SwiftPM itself reports them (`swift package describe --type
/// json`): no manifest is parsed here.
struct PackageGraph: Sendable, Decodable {
    struct Target: Sendable, Decodable {
        var name: String
        var c99name: String
        /// `library`, `executable`, `test`, `macro`, `plugin`, `system-target`, ...
        var type: String
        /// Relative to the package's root.
        var path: String
        var targetDependencies: [String]?
        /// Products of other packages: their names only (SwiftPM does not say which package).
        var productDependencies: [String]?

        enum CodingKeys: String, CodingKey {
            case name, c99name, type, path
            case targetDependencies = "target_dependencies"
            case productDependencies = "product_dependencies"
        }
    }

    struct Dependency: Sendable, Decodable {
        var identity: String
        /// `sourceControl`, `fileSystem` or `registry`.
        var type: String
        /// A `fileSystem` (local path) dependency's folder.
        var path: String?
    }

    /// A product of the package: an executable's binary in the products folder is named after it.
    struct Product: Sendable, Decodable {
        var name: String
        var targets: [String]
    }

    var name: String
    var path: String
    var targets: [Target]
    var dependencies: [Dependency]
    var products: [Product]?

    var testTargets: [Target] { targets.filter { $0.type == "test" }.sorted { $0.name < $1.name } }

    /// The targets behind a file named `name` in the products folder: an executable product's (or an executable
    /// target's, which SwiftPM makes a product of its own), or the target of a resource bundle
    /// `<Package>_<Target>.resources`; with everything they depend on. Empty for anything else.
    func targets(producing name: String) -> [Target] {
        var roots: [String] = []
        if let product = products?.first(where: { $0.name == name }) { roots += product.targets }
        if let t = targets.first(where: { $0.name == name && $0.type == "executable" }) { roots.append(t.name) }
        if name.hasSuffix(".resources"), let cut = name.lastIndex(of: "_") {
            let target = String(name[name.index(after: cut)...].dropLast(".resources".count))
            if targets.contains(where: { $0.name == target }) { roots.append(target) }
        }
        var out: [String: Target] = [:]
        for root in roots {
            guard let t = targets.first(where: { $0.name == root }) else { continue }
            for c in closure(of: t) { out[c.name] = c }
        }
        return out.values.sorted { $0.name < $1.name }
    }

    /// The target and every target it depends on, directly or not (each once, in name order).
    func closure(of target: Target) -> [Target] {
        let byName = Dictionary(targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: Set<String> = [target.name]
        var stack = [target.name]
        while let name = stack.popLast() {
            for next in byName[name]?.targetDependencies ?? [] where !seen.contains(next) && byName[next] != nil {
                seen.insert(next)
                stack.append(next)
            }
        }
        return seen.sorted().compactMap { byName[$0] }
    }

    /// Asks SwiftPM for the graph of the package at `package`: the JSON of `swift package describe`.
    static func describeJSON(package: String, swift: String) async throws(FanoutError) -> Data {
        let command = Command(executable: swift, arguments: ["package", "--package-path", package, "describe", "--type", "json"])
        let (ending, out, err) = await LocalShell("selective").capture(command, timeout: 300)
        guard case .exited(0) = ending else {
            let text = String(decoding: err + out, as: UTF8.self).split(separator: "\n").suffix(10).joined(separator: "\n")
            throw FanoutError("selective testing needs the package's targets, and `swift package describe` failed (\(ending)): \(text)",
                              hint: "Run `swift package describe --type json` in \(package) to see why, or run without --selective.",
                              exitCode: .infrastructure)
        }
        // Warnings may precede the JSON on some toolchains: start at the first `{`.
        let start = out.firstIndex(of: UInt8(ascii: "{")) ?? out.startIndex
        return Data(out[start...])
    }

    static func decode(_ json: Data, package: String) throws(FanoutError) -> PackageGraph {
        do {
            return try JSONDecoder().decode(PackageGraph.self, from: json)
        } catch {
            throw FanoutError("selective testing could not read `swift package describe --type json`: \(error)",
                              hint: "Run it in \(package) to see its output, or run without --selective.",
                              exitCode: .infrastructure)
        }
    }

    static func describe(package: String, swift: String) async throws(FanoutError) -> PackageGraph {
        try decode(try await describeJSON(package: package, swift: swift), package: package)
    }
}
