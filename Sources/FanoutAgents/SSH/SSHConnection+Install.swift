import FanoutCore
import FanoutSSH

extension SSHConnection {
    /// Atomically installs a local file at `remotePath`: uploads it to a temporary name next to it, then renames.
    /// An existing file at `remotePath` is replaced (SFTP v3 rename refuses to overwrite, so then `mv -f` runs).
    ///
    /// It lives here, not in FanoutSSH, because of that `mv`: the SSH module runs finished command lines and quotes
    /// nothing, and the one quoting function (`ShellQuote`) is FanoutCore's.
    @discardableResult
    public func install(_ localPath: String, at remotePath: String, mode: Int32 = 0o644) async throws(SSHError) -> Int {
        let temporary = "\(remotePath).fanout-part-\(UInt64.random(in: 0...UInt64.max) & 0xffff_ffff_ffff)"
        let count: Int
        do {
            count = try await upload(localPath, to: temporary, mode: mode)
        } catch {
            try? await remove(temporary)
            throw error
        }
        do {
            try await rename(temporary, to: remotePath)
        } catch {
            let result = try await run("mv -f -- \(ShellQuote.quote(temporary)) \(ShellQuote.quote(remotePath))", timeout: 30)
            guard result.succeeded else {
                try? await remove(temporary)
                throw .sftpFailed(endpoint, operation: "install (rename)", path: remotePath,
                                  reason: "\(error); `mv -f` failed too: \(result.stderrText)")
            }
        }
        return count
    }
}
