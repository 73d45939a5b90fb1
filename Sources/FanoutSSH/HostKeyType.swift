import CLibSSH2

/// Host key algorithms libssh2 1.10 knows, with their names in three vocabularies
/// (SSH wire/known_hosts name, libssh2 session host key type, libssh2 knownhost type mask).
enum HostKeyType: CaseIterable, Sendable {
    case ed25519, ecdsa256, ecdsa384, ecdsa521, rsa, dss

    /// As written in known_hosts and used in libssh2_session_method_pref(LIBSSH2_METHOD_HOSTKEY, ...).
    var name: String {
        switch self {
        case .ed25519: return "ssh-ed25519"
        case .ecdsa256: return "ecdsa-sha2-nistp256"
        case .ecdsa384: return "ecdsa-sha2-nistp384"
        case .ecdsa521: return "ecdsa-sha2-nistp521"
        case .rsa: return "ssh-rsa"
        case .dss: return "ssh-dss"
        }
    }

    var knownHostMask: Int32 {
        switch self {
        case .ed25519: return LIBSSH2_KNOWNHOST_KEY_ED25519
        case .ecdsa256: return LIBSSH2_KNOWNHOST_KEY_ECDSA_256
        case .ecdsa384: return LIBSSH2_KNOWNHOST_KEY_ECDSA_384
        case .ecdsa521: return LIBSSH2_KNOWNHOST_KEY_ECDSA_521
        case .rsa: return LIBSSH2_KNOWNHOST_KEY_SSHRSA
        case .dss: return LIBSSH2_KNOWNHOST_KEY_SSHDSS
        }
    }

    init?(sessionHostKeyType type: Int32) {
        switch type {
        case LIBSSH2_HOSTKEY_TYPE_ED25519: self = .ed25519
        case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: self = .ecdsa256
        case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: self = .ecdsa384
        case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: self = .ecdsa521
        case LIBSSH2_HOSTKEY_TYPE_RSA: self = .rsa
        case LIBSSH2_HOSTKEY_TYPE_DSS: self = .dss
        default: return nil
        }
    }

    /// Our preference when known_hosts knows nothing of the host yet: ed25519 first (libssh2's own order starts with
    /// ECDSA, which would then be the key recorded under accept-new).
    static let preferenceForUnknownHosts: [HostKeyType] = [.ed25519, .ecdsa256, .ecdsa384, .ecdsa521, .rsa]
}
