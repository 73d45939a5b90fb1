import FanoutTestSupport
import Foundation
import Testing

/// The map and the code agree: every module imports only what its row of docs/ARCHITECTURE.md's table names, and
/// the Coordinator never names a concrete transport (AgentFleet makes them; the protocol answers the rest).
@Suite struct ImportRulesTests {
    /// The modules of this package and the dependencies the table may name, by the short names the table uses.
    static let names: [String: String] = [
        "Core": "FanoutCore", "Runners": "FanoutRunners", "History": "FanoutHistory", "SSH": "FanoutSSH",
        "Agents": "FanoutAgents", "Reports": "FanoutReports", "Coordinator": "FanoutCoordinator", "Queue": "FanoutQueue",
        "GRDB": "GRDB", "Yams": "Yams", "ArgumentParser": "ArgumentParser", "CLibSSH2": "CLibSSH2",
    ]
    /// Each module's folder under Sources/.
    static let folders = ["FanoutCore": "FanoutCore", "FanoutRunners": "FanoutRunners", "FanoutHistory": "FanoutHistory",
                          "FanoutSSH": "FanoutSSH", "FanoutAgents": "FanoutAgents", "FanoutReports": "FanoutReports",
                          "FanoutCoordinator": "FanoutCoordinator", "FanoutQueue": "FanoutQueue", "fanout": "fanout",
                          "fanout-bench": "FanoutBench"]

    /// `| `Module` | owns | may import |` rows of the table, as module → allowed imports.
    static func table() throws -> [String: Set<String>] {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        var rules: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4 else { continue }
            let modules = cells[1].split(separator: "`").map(String.init).filter { folders[$0] != nil }
            let allowed = cells[cells.count - 2]
            var set: Set<String> = []
            if !allowed.hasPrefix("nothing of ours") {
                for word in allowed.split(whereSeparator: { ",; ".contains($0) }) {
                    if let name = names[String(word)] { set.insert(name) }
                }
            }
            if modules.contains("FanoutSSH") { set.insert("CLibSSH2") }
            for m in modules { rules[m] = set }
        }
        return rules
    }

    /// The modules (ours and dependencies) a source folder imports.
    static func imports(of folder: String) throws -> [String: Set<String>] {
        let root = repositoryRoot.appendingPathComponent("Sources/" + folder)
        var out: [String: Set<String>] = [:]
        let files = (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".swift") }
        // A folder that is gone (or renamed) would pass with no imports at all.
        try #require(!files.isEmpty, "Sources/\(folder) has no Swift files: the table names a module that is not there")
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                if let module = importedModule(line), Set(names.values).contains(module) { out[file, default: []].insert(module) }
            }
        }
        return out
    }

    /// The module an import line names: `import X`, `@testable import X`, `public import X`, `internal import X`,
    /// `@_exported import X`, `import struct X.Type`, `import func X.f`. Nil for any other line.
    static func importedModule(_ line: Substring) -> String? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard let i = words.firstIndex(of: "import"), i + 1 < words.count,
              words[..<i].allSatisfy({ $0.hasPrefix("@") || accessLevels.contains(String($0)) }) else { return nil }
        var j = i + 1
        if kinds.contains(String(words[j])), j + 1 < words.count { j += 1 }
        return String(words[j].split(separator: ".").first ?? words[j])
    }

    static let accessLevels: Set = ["public", "package", "internal", "fileprivate", "private"]
    static let kinds: Set = ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let"]

    @Test func everyFormOfImportIsRead() {
        for line in ["import FanoutSSH", "@testable import FanoutSSH", "public import FanoutSSH", "internal import FanoutSSH",
                     "@_exported import FanoutSSH", "import struct FanoutSSH.SSHEndpoint", "package import func FanoutSSH.x"] {
            #expect(Self.importedModule(line[...]) == "FanoutSSH", "\(line)")
        }
        #expect(Self.importedModule("// we import FanoutSSH here") == nil)
        #expect(Self.importedModule("let important = 1") == nil)
    }

    @Test func everyModuleImportsOnlyWhatTheMapAllows() throws {
        let rules = try Self.table()
        #expect(Set(rules.keys) == Set(Self.folders.keys), "a row for every module: \(rules.keys.sorted())")
        for (module, folder) in Self.folders {
            let allowed = rules[module] ?? []
            for (file, used) in try Self.imports(of: folder) {
                let forbidden = used.subtracting(allowed).subtracting([module])
                #expect(forbidden.isEmpty, "Sources/\(folder)/\(file) imports \(forbidden.sorted()), which ARCHITECTURE.md does not allow \(module)")
            }
        }
        // The rules themselves: Core and SSH import nothing of ours, Reports never transports or history.
        #expect(rules["FanoutCore"] == [] && rules["FanoutSSH"] == ["CLibSSH2"])
        #expect(rules["FanoutReports"].map { $0.isDisjoint(with: ["FanoutAgents", "FanoutSSH", "FanoutHistory"]) } == true)
    }

    /// The public types declared in a source folder (`struct`, `class`, `enum`, `actor`, `protocol`, `typealias`),
    /// nested ones included: what another module could name.
    static func declaredTypes(in folder: String) throws -> Set<String> {
        let root = repositoryRoot.appendingPathComponent("Sources/" + folder)
        let files = (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".swift") }
        var names: Set<String> = []
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /(?m)^\s*public\s+(?:(?:final|indirect)\s+)?(?:struct|class|enum|actor|protocol|typealias)\s+([A-Za-z_][A-Za-z0-9_]*)/) {
                names.insert(String(match.1))
            }
        }
        return names
    }

    /// Code lines of the Coordinator's files (comments left out), by file.
    static func coordinatorCode() throws -> [(String, [Substring])] {
        let root = repositoryRoot.appendingPathComponent("Sources/FanoutCoordinator")
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return try files.filter { $0.hasSuffix(".swift") }.sorted().map { file in
            (file, try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") })
        }
    }

    /// Everything about SSH lives in FanoutAgents: the Coordinator names no type of its SSH folder (routes, the
    /// resolver, the remote layout, the SSH transport: `AgentFleet` builds the fleet and resolves routes, the
    /// `Transport` protocol answers the rest) and no concrete transport. What the user configures of the fleet
    /// (`SSHAgentSpec`, `SSHSettings`) is in Agents/Fleet, not Agents/SSH.
    @Test func theCoordinatorNamesNoSSHTypeAndNoConcreteTransport() throws {
        let ssh = try Self.declaredTypes(in: "FanoutAgents/SSH")
        // The scan itself: it finds the SSH folder's types, and the files it reads are the Coordinator's.
        #expect(ssh.isSuperset(of: ["SSHRoute", "OpenSSHResolver", "RemoteLayout", "SSHTransport", "SSHHop"]), "\(ssh.sorted())")
        let banned = ssh.union(["LocalTransport", "LocalProcess", "SSHConnection"])
        let code = try Self.coordinatorCode()
        #expect(code.count > 20)
        for (file, lines) in code {
            for line in lines {
                let words = Set(line.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init))
                let named = words.intersection(banned)
                #expect(named.isEmpty, "Sources/FanoutCoordinator/\(file) names \(named.sorted()): \(line)")
            }
        }
    }
}
